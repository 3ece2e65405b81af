import { GraphQLError, GraphQLScalarType, Kind, valueFromASTUntyped, type ValueNode } from 'graphql';
import { ErrorCode } from './errors.ts';

const DECIMAL = /^-?\d+(\.\d+)?$/;
// ISO 8601 date-time that carries its offset (Z or ±hh:mm): a time without one is ambiguous.
const DATE_TIME_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|([+-])(\d{2}):(\d{2}))$/;
/** The offsets in use on Earth, in minutes: -12:00 (Baker Island) to +14:00 (Kiribati). */
const OFFSET_MINUTES = { min: -12 * 60, max: 14 * 60 };
const DATE_TIME_INPUT = 'DateTime must be ISO 8601 with an offset from -12:00 to +14:00, such as "2026-11-22T14:05:09+01:00".';

/**
 * Whether `value` is a date-time with an offset the world uses. Any other offset (`+99:00`) is
 * refused here, before a price or a resolver reads it: parsers disagree on what it means.
 */
function isDateTime(value: string): boolean {
  const match = DATE_TIME_WITH_OFFSET.exec(value);
  if (!match) return false;
  const [, , , zone, sign, hours, minutes] = match;
  if (zone === 'Z') return true;
  const offset = (sign === '-' ? -1 : 1) * (Number(hours) * 60 + Number(minutes));
  return Number(minutes) < 60 && offset >= OFFSET_MINUTES.min && offset <= OFFSET_MINUTES.max;
}

function invalid(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: ErrorCode.BAD_USER_INPUT } });
}

/** Exact decimals travel as strings; a float (JSON number) is refused both ways so none sneaks in. */
export const DecimalScalar = new GraphQLScalarType<string, string>({
  name: 'Decimal',
  description: 'An exact decimal amount as a string, such as "1500.00".',
  serialize(value) {
    if (typeof value === 'string' && DECIMAL.test(value)) return value;
    throw new GraphQLError('Decimal must be serialised from a decimal string, never a number.');
  },
  parseValue(value) {
    if (typeof value === 'string' && DECIMAL.test(value)) return value;
    throw invalid('Decimal must be a string of digits with an optional fraction, such as "1500.00".');
  },
  parseLiteral(ast) {
    if (ast.kind === Kind.STRING && DECIMAL.test(ast.value)) return ast.value;
    throw invalid('Decimal must be a string of digits with an optional fraction, such as "1500.00".');
  },
});

/** ISO 8601 date-times with their offset, kept as the string they are (the offset is information). */
export const DateTimeScalar = new GraphQLScalarType<string, string>({
  name: 'DateTime',
  description: 'A date and time in ISO 8601 with its UTC offset, from -12:00 to +14:00.',
  serialize(value) {
    if (typeof value === 'string' && DATE_TIME_WITH_OFFSET.test(value)) return value;
    if (value instanceof Date && !Number.isNaN(value.getTime())) return value.toISOString();
    throw new GraphQLError('DateTime must be serialised from an ISO 8601 string with an offset.');
  },
  parseValue(value) {
    if (typeof value === 'string' && isDateTime(value)) return value;
    throw invalid(DATE_TIME_INPUT);
  },
  parseLiteral(ast) {
    if (ast.kind === Kind.STRING && isDateTime(ast.value)) return ast.value;
    throw invalid(DATE_TIME_INPUT);
  },
});

/** Arbitrary JSON, for the bank's undocumented objects. */
export const JSONScalar = new GraphQLScalarType<unknown, unknown>({
  name: 'JSON',
  description: 'Any JSON value.',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (ast: ValueNode, variables) => valueFromASTUntyped(ast, variables),
});
