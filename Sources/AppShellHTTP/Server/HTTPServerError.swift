/// Why the server could not start or run: one line for the operator.
public struct HTTPServerError: Error, Sendable, CustomStringConvertible {
    /// The explanation.
    public let description: String

    /// An error with `description`.
    public init(_ description: String) { self.description = description }
}
