/** Every error the SDK throws (but an abort, which is the signal's own reason). */
export class AgentplaneError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The server answered with an error envelope: `status`, the stable `code` and its `message`. */
export class APIError extends AgentplaneError {
  /** HTTP status. */
  readonly status: number;
  /** The envelope's `error`: a stable snake_case code such as `not_found`. */
  readonly code: string;
  /** The X-Request-ID of the answer, to quote when reporting a problem. */
  readonly requestId: string | null;
  /** The response's headers. */
  readonly headers: Headers;

  constructor(status: number, code: string, message: string, headers: Headers) {
    super(`${status} ${code}: ${message}`);
    this.status = status;
    this.code = code;
    this.requestId = headers.get("x-request-id");
    this.headers = headers;
  }
}

/** 400 `bad_request`: malformed JSON, a wrong type or an out-of-range parameter. */
export class BadRequestError extends APIError {}
/** 401 `unauthorized`: the API key or token is missing, invalid or expired. */
export class AuthenticationError extends APIError {}
/** 402 `plan_limit_exceeded`: the workspace's plan allows no more. */
export class PlanLimitError extends APIError {}
/** 403 `forbidden`: the key lacks a scope, or the address or origin is not allowed. */
export class PermissionDeniedError extends APIError {}
/** 404 `not_found`: no such resource in this workspace. */
export class NotFoundError extends APIError {}
/** 409 `conflict`: the resource's state forbids the request, or an Idempotency-Key was reused. */
export class ConflictError extends APIError {}
/** 422 `validation_error`: well-formed but invalid values. */
export class ValidationError extends APIError {}
/** 429 `rate_limited`: too many requests; `retryAfter` says how long to wait. */
export class RateLimitError extends APIError {
  /** Seconds the server asked to wait (Retry-After), or null when it did not say. */
  readonly retryAfter: number | null;
  constructor(status: number, code: string, message: string, headers: Headers) {
    super(status, code, message, headers);
    this.retryAfter = retryAfterSeconds(headers);
  }
}
/** 5xx: the server failed; `requestId` finds the cause in its log. */
export class InternalServerError extends APIError {}

/** No answer: the connection failed or was cut, or the request timed out. */
export class APIConnectionError extends AgentplaneError {}

/** A stream ended or broke and could not be resumed within the retries allowed. */
export class StreamError extends AgentplaneError {}

const byStatus: Record<number, typeof APIError> = {
  400: BadRequestError,
  401: AuthenticationError,
  402: PlanLimitError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  422: ValidationError,
  429: RateLimitError,
};

/** errorFor builds the error class of a status from an error envelope's fields. */
export function errorFor(status: number, code: string, message: string, headers: Headers): APIError {
  const cls = byStatus[status] ?? (status >= 500 ? InternalServerError : APIError);
  return new cls(status, code, message, headers);
}

/** retryAfterSeconds reads Retry-After (seconds or an HTTP date); null when absent or unreadable. */
export function retryAfterSeconds(headers: Headers): number | null {
  const v = headers.get("retry-after");
  if (v === null || v.trim() === "") return null;
  const n = Number(v);
  if (Number.isFinite(n) && n >= 0) return n;
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, (at - Date.now()) / 1000);
}
