// The entry worker threads load by file name (built as mock/dist/markdown-worker.mjs): the renderer on a thread of its own.
export { default } from './markdown-render.js';
