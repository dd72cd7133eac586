/**
 * Turns errors from the file tools into results the model can act on: a path outside the
 * workspace, a missing file, a folder where a file was expected — never a stack trace.
 */
import type { ToolResult } from "../tool.ts";
import { failed } from "../result.ts";
import { WorkspacePathError } from "../workspace-path.ts";

/** The failed result for an error thrown while working on `shownPath`; rethrows nothing. */
export function fileErrorResult(err: unknown, shownPath: string): ToolResult {
  if (err instanceof WorkspacePathError) return failed(err.message);
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case "ENOENT":
      return failed(`not found: ${shownPath} (list_files shows what exists)`);
    case "ENOTDIR":
      return failed(`not a folder: a part of ${shownPath} is a file`);
    case "EISDIR":
      return failed(`${shownPath} is a folder, not a file (use list_files to see inside it)`);
    case "EACCES":
    case "EPERM":
      return failed(`permission denied: ${shownPath}`);
    case "ENOSPC":
      return failed(`no space left on the device while writing ${shownPath}`);
    case "EEXIST":
      return failed(`${shownPath} already exists and is not a folder`);
    case "ELOOP":
      return failed(`could not open ${shownPath}: too many symbolic links, or the path kept changing while it was opened`);
    case "ENXIO":
      return failed(`${shownPath} is not a regular file (a FIFO, device or socket); only regular files can be read or written`);
    default:
      return failed(`could not access ${shownPath}: ${code ?? (err instanceof Error ? err.message : String(err))}`);
  }
}
