module.exports = {
  plugins: {
    'postcss-preset-mantine': {
      mixins: {
        // Out of sight but read by screen readers (`@mixin visually-hidden;`): what the phone layouts
        // take off the screen, such as a table's header row or a state badge's text.
        'visually-hidden': { position: 'absolute', width: '1px', height: '1px', overflow: 'hidden', clip: 'rect(0 0 0 0)', 'white-space': 'nowrap' },
      },
    },
    'postcss-simple-vars': {
      variables: {
        'mantine-breakpoint-xs': '36em',
        'mantine-breakpoint-sm': '48em',
        'mantine-breakpoint-md': '62em',
        'mantine-breakpoint-lg': '75em',
        'mantine-breakpoint-xl': '88em',
      },
    },
  },
};
