// The ids of a bank statement export: a CSV whose header names a session or settlement id column, or a
// plain list of ids, one a line. csv-parse reads the CSV (quotes, a BOM, every row as long as the header),
// with the one delimiter its header line uses, so a `;` in a comma-separated narration stays text.
import { CsvError, parse } from 'csv-parse/sync';

/** Which argument of `reconcileCollections` an id goes to. */
export type IdKind = 'sessionIds' | 'settlementIds';

/** One id to check, and where the export holds it. */
export interface ExportId {
  kind: IdKind;
  id: string;
  /** Its line in the file, from 1. */
  line: number;
}

/** What an export holds: its ids (each once, in the order first read) and the columns they came from. */
export interface ExportIds {
  ids: ExportId[];
  /** The columns read; empty for a plain list. */
  columns: string[];
}

/** A file that cannot be read as an export; the message names the file, and the line or the column. */
export class ExportError extends Error {}

/** What `--kind` says a column holds. */
export type ColumnKind = 'session' | 'settlement';

export interface ReadOptions {
  /** The file's name, for messages. */
  file: string;
  /** `--column`: the column to read, spelled any way a bank spells it. */
  column?: string | undefined;
  /** `--kind`: what that column (or a plain list) holds, where its name does not say. */
  kind?: ColumnKind | undefined;
}

const DELIMITERS = [',', ';', '\t'] as const;
const KIND_OF: Record<ColumnKind, IdKind> = { session: 'sessionIds', settlement: 'settlementIds' };
const NAME_OF: Record<IdKind, string> = { sessionIds: 'sessionId', settlementIds: 'settlementId' };
/** A number as a spreadsheet writes one it read from a long id: an exponent, or a decimal point. */
const MANGLED = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)[eE][+-]?\d+$|^[+-]?(?:\d+\.\d*|\.\d+)$/;

/** A column name as banks spell it, compared without case, spaces, `_` or `-`: `Settlement ID` is `settlementid`. */
export function normalName(name: string): string {
  return name.toLowerCase().replace(/[\s_-]+/g, '');
}

/** The kind a column's name says it holds, if it says. */
function kindNamed(name: string): IdKind | undefined {
  const normal = normalName(name);
  if (normal.includes('settlement')) return 'settlementIds';
  if (normal.includes('session')) return 'sessionIds';
  return undefined;
}

/**
 * Reads the ids of `text`. A CSV is told by its header line: one with a delimiter, or a lone column
 * name that is a known one or `column`. A plain list is settlement ids unless `kind` (or `column`'s
 * name) says session ids.
 */
export function readExportIds(text: string, options: ReadOptions): ExportIds {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const headerIndex = lines.findIndex((line) => line.trim() !== '');
  if (headerIndex < 0) throw new ExportError(`${options.file} holds no ids`);
  const header = lines[headerIndex]!;
  const delimiter = delimiterOf(header, headerIndex + 1, options.file);
  const lone = normalName(header.trim().replace(/^"(.*)"$/, '$1'));
  const isCsv =
    delimiter !== undefined ||
    ['sessionid', 'settlementid'].includes(lone) ||
    (options.column !== undefined && lone === normalName(options.column));
  return isCsv ? readCsv(text, delimiter ?? ',', options) : readList(lines, options);
}

/** The delimiter `header` uses outside quotes: the one it holds most of; undefined for a single column. */
function delimiterOf(header: string, line: number, file: string): string | undefined {
  const counts = new Map<string, number>();
  let quoted = false;
  for (const char of header) {
    if (char === '"') quoted = !quoted;
    else if (!quoted && (DELIMITERS as readonly string[]).includes(char)) counts.set(char, (counts.get(char) ?? 0) + 1);
  }
  const ranked = [...counts].sort(([, a], [, b]) => b - a);
  if (ranked.length > 1 && ranked[0]![1] === ranked[1]![1]) {
    const [a, b] = ranked.map(([char]) => JSON.stringify(char));
    throw new ExportError(`${file} line ${line}: its header holds as many ${a} as ${b}, so which one separates its columns is unclear`);
  }
  return ranked[0]?.[0];
}

function readList(lines: string[], { file, column, kind }: ReadOptions): ExportIds {
  const listKind = kind !== undefined ? KIND_OF[kind] : ((column === undefined ? undefined : kindNamed(column)) ?? 'settlementIds');
  const ids: ExportId[] = [];
  lines.forEach((text, index) => {
    const id = text.trim();
    if (id === '') return;
    if (/[\s,;]/.test(id)) throw new ExportError(`${file} line ${index + 1}: holds more than one id ("${id}"), where each line is one id`);
    ids.push(checked({ kind: listKind, id, line: index + 1 }, file));
  });
  return { ids: distinct(ids), columns: [] };
}

function readCsv(text: string, delimiter: string, options: ReadOptions): ExportIds {
  const { file } = options;
  let rows: Row[];
  try {
    const options = { bom: true, delimiter, relax_column_count: false, skip_empty_lines: true, trim: true, info: true, raw: true };
    // With `info` and `raw`, each record comes with its line and text (csv-parse's types leave them out).
    rows = parse(text, options) as unknown as Row[];
  } catch (error) {
    if (error instanceof CsvError) throw csvError(error, file, delimiter);
    throw error;
  }
  const [header, ...records] = rows;
  const columns = pickColumns(header!.record, options);
  const ids = records.map(({ record, info, raw }) => {
    // Where the row begins: csv-parse counts to its end, and a quoted field may hold line breaks.
    const line = info.lines - (raw.replace(/\r?\n$/, '').match(/\n/g)?.length ?? 0);
    const found = columns.find(({ index }) => record[index] !== '');
    if (found === undefined) {
      const names = columns.map(({ name }) => name).join(' nor a ');
      throw new ExportError(`${file} line ${line}: has ${columns.length > 1 ? 'neither a' : 'no'} ${names}`);
    }
    return checked({ kind: found.kind, id: record[found.index]!, line }, file);
  });
  if (ids.length === 0) throw new ExportError(`${file} has no rows under its header`);
  return { ids: distinct(ids), columns: columns.map(({ name }) => name) };
}

interface Column {
  index: number;
  name: string;
  kind: IdKind;
}

/** The columns to read, in the order a row is read by: `--column`, else the settlementId column, then the sessionId column. */
function pickColumns(header: string[], { file, column, kind }: ReadOptions): Column[] {
  const normal = header.map(normalName);
  const listed = `its columns: ${header.join(', ')}`;
  const find = (wanted: string, what: string): number | undefined => {
    const at = normal.flatMap((name, index) => (name === wanted ? [index] : []));
    if (at.length > 1)
      throw new ExportError(`${file} has ${at.length} ${what} columns (${at.map((i) => header[i]).join(', ')}): name one with --column`);
    return at[0];
  };
  if (column !== undefined) {
    const index = find(normalName(column), `"${column}"`);
    if (index === undefined) throw new ExportError(`${file} has no column "${column}" (${listed})`);
    const name = header[index]!;
    const columnKind = kind !== undefined ? KIND_OF[kind] : kindNamed(name);
    if (columnKind === undefined)
      throw new ExportError(
        `${file}: the column "${name}" does not say whether it holds session or settlement ids: add --kind session or --kind settlement`,
      );
    return [{ index, name, kind: columnKind }];
  }
  const known = (['settlementIds', 'sessionIds'] as const).flatMap((idKind) => {
    const index = kind === undefined || KIND_OF[kind] === idKind ? find(normalName(NAME_OF[idKind]), NAME_OF[idKind]) : undefined;
    return index === undefined ? [] : [{ index, name: header[index]!, kind: idKind }];
  });
  if (known.length === 0) {
    const wanted = kind === undefined ? 'sessionId or settlementId' : NAME_OF[KIND_OF[kind]];
    throw new ExportError(`${file} has no ${wanted} column (${listed}): name one with --column`);
  }
  return known;
}

/** `id`, unless a spreadsheet has turned it into a number it can no longer be read back from. */
function checked(id: ExportId, file: string): ExportId {
  if (MANGLED.test(id.id)) {
    throw new ExportError(
      `${file} line ${id.line}: "${id.id}" is not an id but a number a spreadsheet made of one (an exponent or a decimal point): export the column as text`,
    );
  }
  return id;
}

interface Row {
  record: string[];
  info: { lines: number };
  raw: string;
}

/** csv-parse's error, told with the line it names. */
function csvError(error: CsvError, file: string, delimiter: string): ExportError {
  const line = typeof error.lines === 'number' ? error.lines : '?';
  if (error.code === 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH') {
    const got = Array.isArray(error.record) ? error.record.length : '?';
    const expected = /expect (\d+)/.exec(error.message)?.[1] ?? '?';
    return new ExportError(
      `${file} line ${line}: ${got} fields where its header has ${expected} (a ${JSON.stringify(delimiter)} inside a field that is not quoted?)`,
    );
  }
  return new ExportError(`${file} line ${line}: not CSV this can read (${error.message})`);
}

/** Each kind and id once, where first read. */
function distinct(ids: ExportId[]): ExportId[] {
  const seen = new Set<string>();
  return ids.filter(({ kind, id }) => !seen.has(`${kind}:${id}`) && seen.add(`${kind}:${id}`));
}
