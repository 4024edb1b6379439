@testable import AppShellHTTP

/// `Host` (allowed hosts) and `X-Forwarded-For` (the client behind a trusted proxy), and IP
/// address literals. Each input line is a field: `H…` a `Host`, anything else an `X-Forwarded-For`.
public enum ForwardedFuzz {
    private static let proxies = try! TrustedProxies(["127.0.0.0/8", "::1/128", "10.0.0.0/8"])
    private static let hosts = try! AllowedHosts(["app.example.com", ".example.org", "*.example.net"])

    /// The client is the peer or an address some hop names; the host check answers nil, 400 or
    /// 421; an address that parses formats as text that parses to the same address.
    public static func run(_ data: [UInt8]) {
        var headers = HTTPHeaders()
        var hops: [IPAddress] = []
        for line in FuzzCheck.lines(data) {
            let isHost = line.first == UInt8(ascii: "H")
            let value = Array(isHost ? line.dropFirst() : line)
            let name = Array((isHost ? "Host" : "X-Forwarded-For").utf8)
            value.withUnsafeBufferPointer { value in
                name.withUnsafeBufferPointer { name in headers.receive(name: name, value: value) }
                if let address = IPAddress(value) {
                    hops.append(address)
                    let text = ClientAddress(address).text
                    FuzzCheck.require(IPAddress(text) == address, "\(text) does not parse back to its address")
                }
            }
        }
        let peer = ClientAddress(text: "127.0.0.1")
        let client = proxies.client(of: peer, headers: headers)
        if let address = client.ipAddress {
            FuzzCheck.require(
                client.text == "127.0.0.1" || address == peer.ipAddress || containsHop(address, data),
                "the client \(client.text) is neither the peer nor a hop")
        } else {
            FuzzCheck.require(false, "the client \(client.text) is not an address")
        }
        let request = try! Request(method: .get, target: "/", headers: headers)
        if let refusal = hosts.refusal(for: request) {
            FuzzCheck.require([400, 421].contains(refusal.status.rawValue), "unexpected status \(refusal.status)")
        }
        _ = hops
    }

    /// Whether some comma-separated hop of the input, brackets and a port removed, is `address`.
    private static func containsHop(_ address: IPAddress, _ data: [UInt8]) -> Bool {
        FuzzCheck.lines(data).contains { line in
            line.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).contains { hop in
                let text = String(decoding: hop, as: UTF8.self).filter { $0 != " " && $0 != "\t" }
                var candidates = [text]
                if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
                    candidates.append(String(text[text.index(after: text.startIndex)..<close]))
                }
                if let colon = text.lastIndex(of: ":") { candidates.append(String(text[..<colon])) }
                return candidates.contains { IPAddress($0) == address }
            }
        }
    }
}
