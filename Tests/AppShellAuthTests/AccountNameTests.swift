import AppShellAuth
import Testing

/// The rules of a user name and of a new password.
@Suite struct AccountNameTests {
    @Test(arguments: [
        ("ann", "ann"), ("Ann.Smith-2_x", "ann.smith-2_x"), ("0", "0"), (String(repeating: "a", count: 64), nil),
    ])
    func accountNamesAreFoldedAndChecked(typed: String, stored: String?) throws {
        #expect(try AccountName(typed).text == stored ?? typed)
    }

    @Test(arguments: ["", ".ann", "_ann", "ann!", "änn", "ann\n", String(repeating: "a", count: 65)])
    func invalidAccountNamesAreRefused(typed: String) {
        #expect(throws: CredentialError.self) { try AccountName(typed) }
    }

    @Test func passwordsAreCheckedByCodePointsAndBytes() throws {
        try PasswordRule.check("12345678")
        try PasswordRule.check("ééééééé🍣")
        try PasswordRule.check(String(repeating: "a", count: 1_024))
        #expect(throws: CredentialError("a password has at least 8 characters")) { try PasswordRule.check("1234567") }
        #expect(throws: CredentialError("a password has at most 1024 bytes")) {
            try PasswordRule.check(String(repeating: "a", count: 1_025))
        }
    }
}
