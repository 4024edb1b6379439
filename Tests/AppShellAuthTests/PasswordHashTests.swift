import AppShellAuth
import Testing

/// Argon2id hashing and verification through libsodium.
@Suite struct PasswordHashTests {
    @Test func madeHashVerifiesItsPassword() throws {
        let hash = try PasswordHash.make(password: "correct horse battery staple")
        #expect(PasswordHash.verify(password: "correct horse battery staple", against: hash))
        #expect(PasswordHash.isWellFormed(hash))
    }

    @Test func wrongPasswordDoesNotVerify() throws {
        let hash = try PasswordHash.make(password: "secret")
        #expect(!PasswordHash.verify(password: "Secret", against: hash))
        #expect(!PasswordHash.verify(password: "secret ", against: hash))
        #expect(!PasswordHash.verify(password: "", against: hash))
    }

    @Test func hashIsArgon2idWithARandomSalt() throws {
        let first = try PasswordHash.make(password: "same")
        let second = try PasswordHash.make(password: "same")
        #expect(first.hasPrefix("$argon2id$v=19$m="))
        #expect(second.hasPrefix("$argon2id$v=19$m="))
        #expect(first != second)
        #expect(PasswordHash.verify(password: "same", against: first))
        #expect(PasswordHash.verify(password: "same", against: second))
    }

    @Test(arguments: [
        "",
        "$argon2id$garbage",
        "$argon2id$v=19$m=65536,t=2,p=1$",
        "$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW",
        "$argon2i$v=19$m=65536,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$3bhoNvT8gZUOUHPXsBCJdTGlbR4wEY2Pn2dm+pjq4Zk",
        "plain text password",
    ])
    func malformedHashNeitherVerifiesNorIsWellFormed(hash: String) {
        #expect(!PasswordHash.verify(password: "plain text password", against: hash))
        #expect(!PasswordHash.isWellFormed(hash))
    }

    @Test func hashWithATrailingNULOrTooLongIsRejected() throws {
        let hash = try PasswordHash.make(password: "pw")
        #expect(!PasswordHash.verify(password: "pw", against: hash + "\0"))
        #expect(!PasswordHash.isWellFormed(hash + "\0"))
        #expect(!PasswordHash.isWellFormed(hash + String(repeating: "A", count: 200)))
    }

    @Test(arguments: ["pässwörd", "пароль", "密码🔑", "e\u{301}"])
    func unicodePasswordsRoundTrip(password: String) throws {
        let hash = try PasswordHash.make(password: password)
        #expect(PasswordHash.verify(password: password, against: hash))
        #expect(!PasswordHash.verify(password: password + "x", against: hash))
    }

    @Test func passwordsAreComparedAsUTF8BytesNotTruncatedAtNUL() throws {
        let hash = try PasswordHash.make(password: "a\0b")
        #expect(!PasswordHash.verify(password: "a", against: hash))
        #expect(!PasswordHash.verify(password: "a\0c", against: hash))
    }

    @Test func precomposedAndDecomposedFormsAreDifferentPasswords() throws {
        // Callers that want "é" typed either way to match must normalise before hashing.
        let hash = try PasswordHash.make(password: "caf\u{E9}")
        #expect(!PasswordHash.verify(password: "cafe\u{301}", against: hash))
    }

    @Test func dummyVerificationTakesAboutAsLongAsARealOne() throws {
        let hash = try PasswordHash.make(password: "real")
        PasswordHash.verifyDummy(password: "warm-up")  // makes the dummy hash once
        let clock = ContinuousClock()
        let real = clock.measure { _ = PasswordHash.verify(password: "guess", against: hash) }
        let dummy = clock.measure { PasswordHash.verifyDummy(password: "guess") }
        // Same parameters, so the same work; the bounds are loose because tests run in parallel.
        #expect(dummy > real / 4)
        #expect(dummy < real * 4)
    }
}
