/// A valid account name, as the store keeps it: 1 to 64 characters of `a`–`z`, `0`–`9`, `.`, `_`
/// and `-`, the first a letter or a digit. Names are compared case-insensitively: what is typed
/// is lowercased first, so `Ann` and `ann` are one account, stored as `ann`.
///
/// Narrow on purpose: a name shows in URLs, logs and store keys (Redis keys are built from it),
/// and no two names may look alike.
package struct AccountName: Sendable, Hashable, CustomStringConvertible {
    /// The most characters a name may have.
    package static let maximumLength = 64

    /// The name as stored: lowercased.
    package let text: String

    /// The name `typed` is (lowercased), or an error saying what is wrong with it.
    package init(_ typed: String) throws(CredentialError) {
        let name = typed.lowercased()
        guard !name.isEmpty else { throw CredentialError("a user name must not be empty") }
        guard name.unicodeScalars.count <= AccountName.maximumLength else {
            throw CredentialError("a user name has at most \(AccountName.maximumLength) characters")
        }
        if let wrong = name.unicodeScalars.first(where: { !AccountName.allowed($0) }) {
            throw CredentialError(
                "a user name has only the letters a-z, digits, '.', '_' and '-', not \(AccountName.shown(wrong))")
        }
        guard let first = name.unicodeScalars.first, AccountName.isLetterOrDigit(first) else {
            throw CredentialError("a user name begins with a letter or a digit")
        }
        text = name
    }

    /// The name as stored.
    package var description: String { text }

    private static func isLetterOrDigit(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar)
    }

    private static func allowed(_ scalar: Unicode.Scalar) -> Bool {
        isLetterOrDigit(scalar) || scalar == "." || scalar == "_" || scalar == "-"
    }

    /// A character as a message shows it: quoted when printable, else by its code.
    private static func shown(_ scalar: Unicode.Scalar) -> String {
        scalar.properties.isWhitespace || scalar.value < 0x20 || scalar.value == 0x7F
            ? "U+" + String(scalar.value, radix: 16, uppercase: true) : "'\(scalar)'"
    }
}

/// Why a user name or a new password is refused: one sentence for the person who typed it.
package struct CredentialError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, e.g. "a password has at least 8 characters".
    package let description: String

    /// An error saying `description`.
    package init(_ description: String) { self.description = description }
}
