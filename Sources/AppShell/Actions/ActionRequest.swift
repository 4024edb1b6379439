import AppShellJSON

/// One request of an action, as the client sent it: the action's name, its other parameters and
/// the client's address. A screen's `ScreenActions` enum decodes it into a case; a handler that
/// needs more than the case (the client's address, for a rate limit) is given it beside the case.
public struct ActionRequest: Sendable {
    /// The action's name, e.g. `login` or `showList`.
    public let name: String
    /// Everything else the request sent, e.g. `username` and `password`.
    public let parameters: [String: JSON]
    /// The client's IP address (for rate limits): `Request.clientAddress`, the forwarded one
    /// behind a trusted proxy.
    public let clientAddress: String

    /// An action with its parameters.
    public init(name: String, parameters: [String: JSON] = [:], clientAddress: String = "") {
        self.name = name
        self.parameters = parameters
        self.clientAddress = clientAddress
    }

    /// The string parameter `key`, or `nil`.
    public func string(_ key: String) -> String? { parameters[key]?.stringValue }
}
