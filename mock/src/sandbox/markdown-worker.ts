// The entry worker threads load by file name (built as mock/dist/markdown-worker.mjs): the
// renderer, on a thread of its own, so a large text takes that thread's time and memory, never
// the server's event loop.
export { default } from './markdown-render.js';
