// The console's entry: styles, uPlot's stylesheet, and the app.
import { render } from 'preact';
import 'uplot/dist/uPlot.min.css';
import './styles.css';
import { App } from './app/App.tsx';

render(<App />, document.getElementById('app')!);
