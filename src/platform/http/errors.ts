/**
 * Domain errors: services throw these with the spec's message; one error handler turns them into
 * the error envelope `{ success: false, errno, message, additional_info? }` (or the route's own, see
 * `errorEnvelope` in `routeOptions`).
 */
export class DomainError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly additionalInfo?: unknown,
  ) {
    super(message)
    this.name = new.target.name
  }
}

export class Invalid extends DomainError {
  constructor(message: string, additionalInfo?: unknown) {
    super(400, message, additionalInfo)
  }
}

export class Unauthorized extends DomainError {
  constructor(reason?: string) {
    super(401, 'Unauthorized', reason)
  }
}

export class Forbidden extends DomainError {
  constructor(message: string, additionalInfo?: unknown) {
    super(403, message, additionalInfo)
  }
}

export class NotFound extends DomainError {
  constructor(message: string, additionalInfo?: unknown) {
    super(404, message, additionalInfo)
  }
}

export class Conflict extends DomainError {
  constructor(message: string, additionalInfo?: unknown) {
    super(409, message, additionalInfo)
  }
}

export class TooManyRequests extends DomainError {
  constructor(readonly retryAfterSeconds: number) {
    super(429, 'Too many requests', { retry_after: retryAfterSeconds })
  }
}

export class UpstreamFailed extends DomainError {
  constructor(message: string, additionalInfo?: unknown) {
    super(502, message, additionalInfo)
  }
}

export class Unavailable extends DomainError {
  constructor(message: string) {
    super(503, message)
  }
}

/** A 503 that says when to try again (RFC 9110 15.6.4: `Retry-After`), for a dependency that is down for now. */
export class ServiceUnavailable extends DomainError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(503, message, { retry_after: retryAfterSeconds })
  }
}
