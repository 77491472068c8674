// The stylesheet is imported for esbuild to bundle it beside the script; it exports nothing.
declare module '*.css';
