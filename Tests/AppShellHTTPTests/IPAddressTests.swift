import Testing

@testable import AppShellHTTP

/// IP address literals as `X-Forwarded-For` hops and `Host` fields give them.
@Suite struct IPAddressTests {
    @Test(arguments: ["1.2.3.4", "::1", "2001:db8::5", "::ffff:1.2.3.4"])
    func literalsParse(text: String) {
        #expect(IPAddress(text) != nil)
    }

    /// Found by the forwarded fuzz target: `inet_pton` stops at a NUL, so `1.21.2.3\0…` was read
    /// as `1.21.2.3`.
    @Test(arguments: ["1.21.2.3\u{0}.4", "::1\u{0}evil.example", "\u{0}1.2.3.4", "1.2.3.4\u{0}"])
    func aNULByteMakesNoAddress(text: String) {
        #expect(IPAddress(text) == nil)
    }
}
