/// What a username and a password must be to make an account (sign-up, `appshell users add`) or
/// change a password: each check returns what is wrong, in words for the user, or `nil`.
public enum AccountRules {
    /// The longest username, in characters.
    public static let maxUsernameLength = 64
    /// The shortest password, in characters (NIST SP 800-63B: at least 8).
    public static let minPasswordLength = 8
    /// The longest password, in UTF-8 bytes (long passphrases are welcome; beyond this a password
    /// only costs the hash's time).
    public static let maxPasswordBytes = 1024

    /// The rules in one line, as the sign-up screen shows them.
    public static let summary =
        "A username is 1 to \(maxUsernameLength) letters a–z, digits, dots, dashes or underscores, starting with a "
        + "letter or a digit. A password has at least \(minPasswordLength) characters."

    /// The name an account is kept under: `username` in lower case (names are compared without
    /// case: `Alice` and `alice` are one account).
    public static func canonicalName(_ username: String) -> String { username.lowercased() }

    /// What is wrong with `username` as a new account's name, or `nil` when it is good.
    public static func problem(withUsername username: String) -> String? {
        let name = canonicalName(username)
        guard !name.isEmpty else { return "Choose a username." }
        guard name.count <= maxUsernameLength else {
            return "A username has at most \(maxUsernameLength) characters."
        }
        let allowed = name.unicodeScalars.allSatisfy { scalar in
            ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "." || scalar == "_"
                || scalar == "-"
        }
        guard allowed else { return "A username has only letters a–z, digits, dots, dashes and underscores." }
        guard let first = name.unicodeScalars.first, ("a"..."z").contains(first) || ("0"..."9").contains(first) else {
            return "A username starts with a letter or a digit."
        }
        return nil
    }

    /// What is wrong with `password` as a new password, or `nil` when it is good.
    public static func problem(withPassword password: String) -> String? {
        guard password.count >= minPasswordLength else {
            return "A password has at least \(minPasswordLength) characters."
        }
        guard password.utf8.count <= maxPasswordBytes else {
            return "A password has at most \(maxPasswordBytes) bytes."
        }
        return nil
    }
}
