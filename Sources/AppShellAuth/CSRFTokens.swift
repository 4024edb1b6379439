import CSodium

/// Per-session tokens for HTML forms: HMAC-SHA-512-256 of the session id under a server key.
///
/// Nothing is stored per session: the token is recomputed from the id, so it changes whenever the
/// id is rotated (login, logout) and an attacker who cannot read the page cannot forge it.
package struct CSRFTokens: Sendable {
    private let key: [UInt8]

    /// The size of a key in bytes.
    package static let keyLength = 32

    /// Tokens under `key` (`keyLength` random bytes, kept secret and stable across restarts).
    package init(key: [UInt8]) {
        precondition(key.count == CSRFTokens.keyLength, "a CSRF key has \(CSRFTokens.keyLength) bytes")
        self.key = key
    }

    /// A new random key.
    package static func randomKey() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<keyLength).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// The token for the session whose id has these bytes, as 64 hexadecimal digits.
    package func token(for session: [UInt8]) -> String {
        precondition(sodiumIsReady, "libsodium did not initialise")
        var mac = [UInt8](repeating: 0, count: crypto_auth_bytes())
        _ = crypto_auth(&mac, session, UInt64(session.count), key)
        // sodium_bin2hex writes the digits and a terminating NUL (constant time, like the MAC).
        var text = [CChar](repeating: 0, count: mac.count * 2 + 1)
        _ = sodium_bin2hex(&text, text.count, mac, mac.count)
        return String(decoding: text.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether `token` is the session's, compared in constant time.
    package func isValid(_ token: String?, for session: [UInt8]) -> Bool {
        guard let token else { return false }
        let expected = Array(self.token(for: session).utf8)
        let given = Array(token.utf8)
        guard given.count == expected.count else { return false }
        return sodium_memcmp(given, expected, expected.count) == 0
    }
}
