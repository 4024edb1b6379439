import Glibc
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

    /// The peer's address as the socket gives it is written as text when asked for (every action
    /// asks); none is the empty text.
    @Test func aSocketAddressIsWrittenAsText() {
        var v4 = sockaddr_in()
        v4.sin_family = sa_family_t(AF_INET)
        #expect(inet_pton(AF_INET, "192.0.2.10", &v4.sin_addr) == 1)
        let text4 = withUnsafePointer(to: &v4) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { ClientAddress($0).text }
        }
        #expect(text4 == "192.0.2.10")
        var v6 = sockaddr_in6()
        v6.sin6_family = sa_family_t(AF_INET6)
        #expect(inet_pton(AF_INET6, "2001:db8::ab:1", &v6.sin6_addr) == 1)
        let text6 = withUnsafePointer(to: &v6) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { ClientAddress($0).text }
        }
        #expect(text6 == "2001:db8::ab:1")
        #expect(ClientAddress(nil).text == "")
        #expect(ClientAddress(text: "::1").text == "::1")
    }

    /// IPv4 addresses are written without `inet_ntop`: every byte's digits as `inet_ntop` writes them.
    @Test(arguments: ["0.0.0.0", "127.0.0.1", "9.10.99.100", "255.255.255.255", "192.0.2.10", "1.200.30.4"])
    func anIPv4AddressIsWrittenAsInetNtopWritesIt(text: String) {
        var raw = in_addr()
        #expect(inet_pton(AF_INET, text, &raw) == 1)
        #expect(ClientAddress.dotted(raw) == text)
    }
}
