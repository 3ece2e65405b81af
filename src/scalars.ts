import { GraphQLError, GraphQLScalarType, Kind, valueFromASTUntyped, type ValueNode } from 'graphql';
import { ErrorCode } from './errors.ts';

const DECIMAL = /^-?\d+(\.\d+)?$/;
// ISO 8601 date-time that carries its offset (Z or ±hh:mm): a time without one is ambiguous.
const DATE_TIME_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

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
  description: 'A date and time in ISO 8601 with its UTC offset.',
  serialize(value) {
    if (typeof value === 'string' && DATE_TIME_WITH_OFFSET.test(value)) return value;
    if (value instanceof Date && !Number.isNaN(value.getTime())) return value.toISOString();
    throw new GraphQLError('DateTime must be serialised from an ISO 8601 string with an offset.');
  },
  parseValue(value) {
    if (typeof value === 'string' && DATE_TIME_WITH_OFFSET.test(value)) return value;
    throw invalid('DateTime must be ISO 8601 with an offset, such as "2026-11-22T14:05:09+01:00".');
  },
  parseLiteral(ast) {
    if (ast.kind === Kind.STRING && DATE_TIME_WITH_OFFSET.test(ast.value)) return ast.value;
    throw invalid('DateTime must be ISO 8601 with an offset, such as "2026-11-22T14:05:09+01:00".');
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
