import AppShellAuth

/// The CSRF token a form posts (`csrf`), checked against the session's.
public enum CSRFTokenFuzz {
    private static let tokens = CSRFTokens(key: Array(repeating: 7, count: CSRFTokens.keyLength))
    private static let session: [UInt8] = Array(0..<32)
    private static let expected = tokens.token(for: session)

    /// Only the session's own token is valid; any other text (and the token under another
    /// session's bytes, here the input's) is not.
    public static func run(_ data: [UInt8]) {
        let given = String(decoding: data, as: UTF8.self)
        FuzzCheck.require(tokens.isValid(given, for: session) == (given == expected), "a wrong token was accepted")
        let other = tokens.token(for: data)
        FuzzCheck.require(other.utf8.count == 64, "a token is not 64 hexadecimal digits")
        FuzzCheck.require(tokens.isValid(other, for: data), "a session's own token was refused")
        FuzzCheck.require(
            data == session || !tokens.isValid(other, for: session), "another session's token was accepted")
    }
}
