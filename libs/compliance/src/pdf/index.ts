export { renderReportPdf } from './render-report-pdf.ts';
export { toWinAnsi } from './win-ansi.ts';
