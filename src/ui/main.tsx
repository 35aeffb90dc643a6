// Entry point of the viewer bundle.
import { render } from 'preact';
import { App } from './app.js';
import { applyTheme, followSystemTheme } from './lib/theme.js';
import './styles.css';

applyTheme();
followSystemTheme();
render(<App />, document.getElementById('app')!);
