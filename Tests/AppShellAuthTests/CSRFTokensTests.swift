import AppShellAuth
import Testing

/// The forms' tokens: HMAC-SHA-512-256 of the session id, written as lower-case hex.
@Suite struct CSRFTokensTests {
    @Test func aTokenIsTheMACInLowerCaseHex() {
        let tokens = CSRFTokens(key: [UInt8](repeating: 1, count: CSRFTokens.keyLength))
        // Python: hmac.new(bytes([1] * 32), bytes(range(32)), hashlib.sha512).digest()[:32].hex()
        let expected = "27363c0c912f10207d4f0455b6ed2bc8f1398648f20e28722dbe8a960cf9e3f8"
        #expect(tokens.token(for: Array(0..<32)) == expected)
        #expect(tokens.isValid(expected, for: Array(0..<32)))
        #expect(!tokens.isValid(expected.uppercased(), for: Array(0..<32)))
        #expect(!tokens.isValid(expected, for: Array(1...32)))
    }
}
