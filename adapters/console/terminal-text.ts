/**
 * What the console may put on the operator's terminal. Model answers, tool output and approval
 * questions all come from outside, and a terminal obeys what it is sent: escape sequences can move
 * the cursor, rewrite lines already shown (a fake "Approved" above a real question), set the window
 * title, or make some terminals copy text to the clipboard or answer with keystrokes. Every escape
 * and control sequence (7-bit ESC forms and 8-bit C1 forms) is removed, other control characters
 * but tab and newline are dropped, and bidi controls are shown as ⟨U+XXXX⟩ so text cannot be
 * reordered on screen.
 */

const SEQUENCES = new RegExp(
  [
    "\\u001b\\[[0-?]*[ -/]*[@-~]", // CSI: cursor, colours, erase
    "\\u001b[\\]PX^_][\\s\\S]*?(?:\\u0007|\\u001b\\\\|\\u009c|$)", // OSC, DCS, SOS, PM, APC strings
    "\\u001b[ -/]*[0-~]", // other ESC sequences
    "\\u009b[0-?]*[ -/]*[@-~]", // 8-bit CSI
    "[\\u009d\\u0090\\u0098\\u009e\\u009f][\\s\\S]*?(?:\\u0007|\\u009c|$)", // 8-bit strings
  ].join("|"),
  "g",
);
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** `text` with every terminal escape and control sequence removed, ready to print. */
export function terminalSafe(text: string): string {
  return text
    .replace(/\r\n/g, "\n")
    .replace(SEQUENCES, "")
    .replace(CONTROLS, "")
    .replace(BIDI, (ch) => `⟨U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}⟩`);
}
