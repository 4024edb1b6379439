/// What a new password must be (NIST SP 800-63B, 5.1.1.2): at least 8 characters, each Unicode
/// code point counting as one, and at most 1 024 bytes (UTF-8) — long passphrases are welcome, and
/// the bound keeps a request from making Argon2id hash a megabyte. No rules of composition.
package enum PasswordRule {
    /// The fewest characters (Unicode code points) a password may have.
    package static let minimumCharacters = 8
    /// The most bytes (UTF-8) a password may have.
    package static let maximumBytes = 1_024

    /// Throws an error saying what is wrong when `password` may not be chosen.
    package static func check(_ password: String) throws(CredentialError) {
        guard password.unicodeScalars.count >= minimumCharacters else {
            throw CredentialError("a password has at least \(minimumCharacters) characters")
        }
        guard password.utf8.count <= maximumBytes else {
            throw CredentialError("a password has at most \(maximumBytes) bytes")
        }
    }
}
