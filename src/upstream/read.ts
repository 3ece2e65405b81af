/**
 * Small typed readers for the bank's JSON, and the two ways a reader refuses an answer. A reader
 * throws `AnswerRefused`; `http.ts` turns it into an `UpstreamError` with the call's area and
 * operation, so metrics and logs see it like any other failure. Reasons name fields, never values.
 */
import type { UpstreamErrorCode } from '../errors.ts';

export type JsonObject = Record<string, unknown>;

/** What a bank answer means for the contract, when it is not the success the caller wanted. */
export interface AnswerFailure {
  code: UpstreamErrorCode;
  responseCode?: string | undefined;
  responseMessage?: string | undefined;
  /** For the warn log only: a fixed text naming fields, never holding a value from the body. */
  reason?: string | undefined;
}

/** Thrown by readers; carries the contract code and the bank's own code and message. */
export class AnswerRefused extends Error {
  readonly failure: AnswerFailure;

  constructor(failure: AnswerFailure) {
    super(failure.reason ?? failure.code);
    this.name = 'AnswerRefused';
    this.failure = failure;
  }
}

/** A body of the wrong shape: `UPSTREAM_INVALID_RESPONSE`, with why for the log. */
export function invalidAnswer(reason: string): AnswerRefused {
  return new AnswerRefused({ code: 'UPSTREAM_INVALID_RESPONSE', reason });
}

/** The bank said no: `UPSTREAM_REJECTED`, carrying its code and message where it gave them. */
export function rejectedAnswer(responseCode: string | undefined, responseMessage: string | undefined): AnswerRefused {
  return new AnswerRefused({
    code: 'UPSTREAM_REJECTED',
    responseCode,
    responseMessage,
    reason: 'refused in the body',
  });
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The body as a JSON object, or a shape failure naming `what`. */
export function objectBody(value: unknown, what: string): JsonObject {
  if (!isObject(value)) throw invalidAnswer(`${what} is not a JSON object`);
  return value;
}

/** The body as a JSON array, or a shape failure naming `what`. */
export function arrayBody(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw invalidAnswer(`${what} is not a JSON array`);
  return value;
}

/** A required non-empty string field. */
export function requiredString(object: JsonObject, field: string, what: string): string {
  const value = object[field];
  if (typeof value !== 'string' || value.trim() === '') {
    throw invalidAnswer(`${what}.${field} is not a non-empty string`);
  }
  return value;
}

/** The first of `fields` holding a non-blank string; `null` when none does (blank means absent). */
export function optionalString(object: JsonObject, ...fields: string[]): string | null {
  for (const field of fields) {
    const value = object[field];
    if (typeof value === 'string' && value.trim() !== '') return value;
  }
  return null;
}

/** Like `optionalString`, but a number is taken as its decimal text (ids the bank may send as numbers). */
export function optionalText(object: JsonObject, ...fields: string[]): string | null {
  for (const field of fields) {
    const value = object[field];
    if (typeof value === 'number' && Number.isFinite(value)) return String(value);
    if (typeof value === 'string' && value.trim() !== '') return value;
  }
  return null;
}

/** The first of `fields` holding a whole number, or its digits as text; `null` when none does. */
export function optionalInteger(object: JsonObject, ...fields: string[]): number | null {
  for (const field of fields) {
    const value = object[field];
    if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
    if (typeof value === 'string' && /^\d{1,15}$/.test(value.trim())) return Number(value.trim());
  }
  return null;
}

export function optionalBoolean(object: JsonObject, field: string): boolean | null {
  const value = object[field];
  return typeof value === 'boolean' ? value : null;
}

/** The bank's free text for an error extension: trimmed, bounded, `undefined` when absent or blank. */
export function bankText(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const text = value.trim();
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
