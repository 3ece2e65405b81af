// The ids of a bank statement export: a CSV whose header names a session or settlement id column, or a
// plain list of ids, one a line. csv-parse reads the CSV (quotes, delimiters, a BOM), so an export from a
// spreadsheet reads as the bank's own does.
import { parse } from 'csv-parse/sync';

/** Which argument of `reconcileCollections` the ids go to. */
export type IdKind = 'sessionIds' | 'settlementIds';

/** What an export holds: its ids (in order, each once), their kind, and the column they came from. */
export interface ExportIds {
  kind: IdKind;
  /** The column read, or `undefined` for a plain list. */
  column: string | undefined;
  ids: string[];
}

/** A file that cannot be read as an export; the message names the file or the column. */
export class ExportError extends Error {}

/** The header names read without `--column`, in the order they are preferred: a settlementId is the store's key. */
const KNOWN_COLUMNS: readonly [string, IdKind][] = [
  ['settlementid', 'settlementIds'],
  ['settlement_id', 'settlementIds'],
  ['sessionid', 'sessionIds'],
  ['session_id', 'sessionIds'],
];

/**
 * Reads the ids of `text` (the file `file`). A CSV is told by its header: a line with a delimiter, or a
 * lone known column name. `column` picks the column by name (any case); its kind is a session id when its
 * name says "session", else a settlement id. A plain list is settlement ids, or session ids when
 * `column` says so.
 */
export function readExportIds(text: string, { file, column }: { file: string; column?: string | undefined }): ExportIds {
  const lines = text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .filter((line) => line.trim() !== '');
  if (lines.length === 0) throw new ExportError(`${file} holds no ids`);
  const first = lines[0]!.trim();
  const isCsv = /[,;\t]/.test(first) || KNOWN_COLUMNS.some(([name]) => name === first.toLowerCase().replace(/^"|"$/g, ''));
  if (!isCsv) {
    return {
      kind: column === undefined ? 'settlementIds' : kindOf(column),
      column: undefined,
      ids: distinct(lines.map((line) => line.trim())),
    };
  }
  let rows: string[][];
  try {
    rows = parse(text, { bom: true, delimiter: [',', ';', '\t'], skip_empty_lines: true, relax_column_count: true, trim: true });
  } catch (error) {
    throw new ExportError(`${file} is not a CSV this can read: ${(error as Error).message}`);
  }
  const header = rows[0]!.map((name) => name.toLowerCase());
  const [index, kind] = pickColumn(header, column, file);
  const ids = rows
    .slice(1)
    .map((row) => row[index] ?? '')
    .filter((id) => id !== '');
  if (ids.length === 0) throw new ExportError(`${file} has no ids in its ${rows[0]![index]} column`);
  return { kind, column: rows[0]![index], ids: distinct(ids) };
}

function pickColumn(header: string[], column: string | undefined, file: string): [number, IdKind] {
  if (column !== undefined) {
    const index = header.indexOf(column.toLowerCase());
    if (index < 0) throw new ExportError(`${file} has no column "${column}" (its columns: ${header.join(', ')})`);
    return [index, kindOf(column)];
  }
  for (const [name, kind] of KNOWN_COLUMNS) {
    const index = header.indexOf(name);
    if (index >= 0) return [index, kind];
  }
  throw new ExportError(
    `${file} has no sessionId, session_id, settlementId or settlement_id column (its columns: ${header.join(', ')}): name one with --column`,
  );
}

function kindOf(column: string): IdKind {
  return /session/i.test(column) ? 'sessionIds' : 'settlementIds';
}

function distinct(ids: string[]): string[] {
  return [...new Set(ids)];
}
