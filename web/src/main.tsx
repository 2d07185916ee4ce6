import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import './styles/first.css';
import { i18nReady } from './i18n';
import { App } from './app/App';
import { preloadScreen } from './app/routes';

preloadScreen(location.pathname);

// The active language's texts (with the error messages) first: the first navigation needs them.
void i18nReady.finally(() =>
  createRoot(document.getElementById('root')!).render(
    <StrictMode>
      <App />
    </StrictMode>,
  ),
);
