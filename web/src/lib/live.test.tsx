import { describe, expect, it } from 'vitest';
import { act, render, screen } from '@testing-library/react';
import { MantineProvider } from '@mantine/core';
import { LiveRegions, announce } from './live';

describe('live regions', () => {
  it('are there before anything is said, and say what is announced', async () => {
    render(
      <MantineProvider>
        <LiveRegions />
      </MantineProvider>,
    );
    const polite = screen.getByTestId('live-polite');
    expect(polite).toHaveAttribute('aria-live', 'polite');
    expect(polite).toHaveTextContent('');
    await act(async () => {
      announce('Demo desktop: Started');
      await Promise.resolve();
    });
    expect(polite).toHaveTextContent('Demo desktop: Started');
    await act(async () => {
      announce('Could not start', 'assertive');
      await Promise.resolve();
    });
    expect(screen.getByTestId('live-assertive')).toHaveTextContent('Could not start');
  });
});
