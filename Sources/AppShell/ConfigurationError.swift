/// Why the configuration cannot be used: one line naming the key, for the operator.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The explanation, e.g. `config.json: "port" must be an integer from 0 to 65535, got 70000`.
    public let description: String

    /// An error with `description`.
    public init(_ description: String) { self.description = description }
}
