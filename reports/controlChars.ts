/**
 * Line breaks and other control characters inside one cell or line of text: a bare `\r`, a form
 * feed, U+2028 or NEL end a Markdown table row as surely as `\n` does, and ESC sequences in a
 * kernel, NVTX or thread name would drive the terminal. Export content can hold any of them.
 */
const CONTROL = /\r\n|[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
const CONTROL_BUT_NEWLINE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]/g;

/** The text on one line: every line break and control character (tab included) becomes a space. */
export function oneLine(text: string): string {
  return text.replace(CONTROL, ' ');
}

/** The text with its `\n` line breaks (`\r\n` becomes `\n`); every other control character becomes a space. */
export function keepNewlinesOnly(text: string): string {
  return text.replace(/\r\n/g, '\n').replace(CONTROL_BUT_NEWLINE, ' ');
}
