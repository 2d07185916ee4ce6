// All of Mantine's styles (layered, as first.css): loaded with every screen but the sign-in page.
import '@mantine/core/styles.layer.css';
