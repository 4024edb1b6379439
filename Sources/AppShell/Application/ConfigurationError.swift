/// Why the configuration cannot be used: one line naming the key, for the operator.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The explanation, e.g. `config.json: "port" must be an integer from 0 to 65535, got 70000`.
    public let description: String

    /// An error with `description`, its control characters and line breaks written as `\u{…}`
    /// escapes: it quotes names and values from the file and the environment, and must stay one
    /// line (an `APPSHELL_X\r` variable's name had ended the line). Found by the config fuzz target.
    public init(_ description: String) {
        var line = ""
        for scalar in description.unicodeScalars {
            switch scalar.value {
            case 0..<0x20, 0x7F..<0xA0, 0x2028, 0x2029:
                line += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default:
                line.unicodeScalars.append(scalar)
            }
        }
        self.description = line
    }
}
