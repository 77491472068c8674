export { pdfPages, renderPng } from './pdf-reader.ts';
