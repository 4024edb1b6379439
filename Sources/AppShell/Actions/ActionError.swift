/// Why an action was refused, with the HTTP status the API answers.
public struct ActionError: Error, Sendable, Equatable {
    /// The status: 400 for a malformed action, 401 for wrong credentials, 409 for an action the
    /// screen does not offer, 429 when rate-limited.
    public let status: Int
    /// What was wrong, in words for the user.
    public let message: String
    /// When to try again (`Retry-After`, for 429 and 503), in seconds.
    public let retryAfterSeconds: Int?

    /// An error answering `status` with `message` (and `Retry-After` when `retryAfterSeconds` is given).
    public init(status: Int, _ message: String, retryAfterSeconds: Int? = nil) {
        self.status = status
        self.message = message
        self.retryAfterSeconds = retryAfterSeconds
    }
}
