/** A file imported as its text (Vite's `?raw`), as `readmeSection.ts` reads the README. */
declare module '*?raw' {
  const text: string;
  export default text;
}
