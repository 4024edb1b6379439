/// Where a Redis server is and how to log in to it, as a URL names it:
///
/// - `redis://host`, `redis://host:port`, `redis://host:port/db` — TCP (port 6379, database 0 when
///   not given); an IPv6 address in brackets (`redis://[::1]:6379`);
/// - `redis://:password@host…` or `redis://user:password@host…` — `AUTH` after connecting (Redis 6
///   ACL users; without a user, the `default` one); `%` escapes in either (`%40` for `@`);
/// - `unix:///path/to/redis.sock` or `unix:///path?db=2&password=secret` — a Unix socket;
/// - `redis-cluster://host:port,host:port` — a Redis Cluster, by some of its nodes (the seeds, of
///   which one reachable is enough: the client learns the others from it), with credentials as
///   `redis://` has them or as `?user=…&password=…`; a cluster has database 0 only.
///
/// The schemes are case-insensitive (`REDIS://` too, as RFC 3986 has it); parameter names are not.
/// Anything else is refused with a message saying what is wrong (the configuration check names it
/// at start-up) that quotes nothing of the text but its scheme (`redacted`): a URL that does not
/// parse may hold its password anywhere. `description` leaves the password out: it is what errors
/// and logs show of a URL that parsed.
package struct RedisURL: Sendable, Equatable, CustomStringConvertible {
    /// How to reach the server.
    package enum Address: Sendable, Equatable {
        /// A host name or address and a port.
        case tcp(host: String, port: Int)
        /// The path of a Unix socket.
        case unix(path: String)
    }

    /// How to reach the server.
    package var address: Address
    /// The ACL user to log in as (`nil`: the default user).
    package var username: String?
    /// The password (`nil`: no `AUTH`).
    package var password: String?
    /// The database number (`SELECT`), 0 to 15 on a default server.
    package var database: Int
    /// The seed nodes of a Redis Cluster (`redis-cluster://`), each a `.tcp` address; empty for
    /// a single server. `address` is then the first of them.
    package var clusterSeeds: [Address] = []

    /// Whether the URL names a Redis Cluster (`RedisCluster` serves it) rather than one server.
    package var isCluster: Bool { !clusterSeeds.isEmpty }

    /// The default port of Redis.
    package static let defaultPort = 6379

    /// A URL of its parts.
    package init(address: Address, username: String? = nil, password: String? = nil, database: Int = 0) {
        self.address = address
        self.username = username
        self.password = password
        self.database = database
    }

    /// The URL of a Redis Cluster known by `seeds` (at least one, each `.tcp`), logging in to
    /// every node as `username` with `password`.
    package init(clusterSeeds seeds: [Address], username: String? = nil, password: String? = nil) {
        precondition(!seeds.isEmpty, "a cluster needs a seed node")
        self.init(address: seeds[0], username: username, password: password)
        clusterSeeds = seeds
    }

    /// The single-server URL of a node of this URL's cluster at `host`:`port`, with its credentials.
    package func node(host: String, port: Int) -> RedisURL {
        RedisURL(address: .tcp(host: host, port: port), username: username, password: password)
    }

    /// Parses `text`; throws a `StoreError` saying what is wrong with it, which shows of `text`
    /// only its scheme (`redacted`).
    package init(_ text: String) throws(StoreError) {
        do {
            try self.init(parsing: text)
        } catch {
            throw StoreError("store URL \(RedisURL.redacted(text)): \(error.why)")
        }
    }

    /// What is wrong with `text` as a store URL, quoting none of it; `nil` when it is one.
    package static func refusal(of text: String) -> String? {
        do {
            _ = try RedisURL(parsing: text)
            return nil
        } catch {
            return error.why
        }
    }

    /// Why a text is not a URL; it never quotes the text (it may be the password).
    struct Refusal: Error {
        let why: String
    }

    private init(parsing text: String) throws(Refusal) {
        func refuse(_ why: String) -> Refusal { Refusal(why: why) }
        let schemeText = text.prefix(while: { $0 != ":" })
        let scheme = schemeText.lowercased()
        let afterScheme = text[schemeText.endIndex...]
        if scheme == "unix", afterScheme.hasPrefix("://") {
            var rest = afterScheme.dropFirst("://".count)
            var query: Substring = ""
            if let mark = rest.firstIndex(of: "?") {
                query = rest[rest.index(after: mark)...]
                rest = rest[..<mark]
            }
            guard rest.hasPrefix("/"), rest.count > 1 else {
                throw refuse("a unix:// URL needs an absolute socket path")
            }
            address = .unix(path: String(rest))
            username = nil
            password = nil
            database = 0
            for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let value = parts.count == 2 ? parts[1] : ""
                guard let decoded = RedisURL.percentDecoded(value) else {
                    throw refuse("a bad % escape in a parameter")
                }
                switch parts[0] {
                case "db": database = try RedisURL.database(decoded, refuse)
                case "password": password = decoded
                case "user": username = decoded
                // Not named: a parameter without `=` may be a password pasted in the wrong place.
                default: throw refuse("an unknown parameter (db, password and user are known, in lowercase)")
                }
            }
            return
        }
        if scheme == "redis-cluster", afterScheme.hasPrefix("://") {
            self = try RedisURL(cluster: afterScheme.dropFirst("://".count), refuse)
            return
        }
        guard scheme == "redis", afterScheme.hasPrefix("://") else {
            throw refuse(
                "not a redis://, redis-cluster:// or unix:// URL (rediss://, Redis over TLS, is not supported)")
        }
        var rest = afterScheme.dropFirst("://".count)
        let credentials = try RedisURL.credentials(takenFrom: &rest, refuse)
        username = credentials?.username
        password = credentials?.password
        var path: Substring = ""
        if let slash = rest.firstIndex(of: "/") {
            path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
        }
        database = path.isEmpty ? 0 : try RedisURL.database(path, refuse)
        address = try RedisURL.hostAndPort(rest, refuse)
    }

    /// Takes `user:password@` or `:password@` off the front of `rest` (what follows the scheme's
    /// `://`), decoded: the user (`nil` when empty: the default one) and the password; `nil` when
    /// `rest` holds no `@`. The last `@` ends them: a password may hold one unescaped.
    static func credentials(
        takenFrom rest: inout Substring, _ refuse: (String) -> Refusal
    ) throws(Refusal) -> (username: String?, password: String)? {
        guard let at = rest.lastIndex(of: "@") else { return nil }
        let credentials = rest[..<at]
        rest = rest[rest.index(after: at)...]
        let parts = credentials.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw refuse("credentials must be user:password or :password") }
        guard let user = RedisURL.percentDecoded(parts[0]), let secret = RedisURL.percentDecoded(parts[1]) else {
            throw refuse("a bad % escape in the credentials")
        }
        return (user.isEmpty ? nil : user, secret)
    }

    /// `host`, `host:port` or `[v6]:port`, as a `.tcp` address.
    static func hostAndPort(_ rest: Substring, _ refuse: (String) -> Refusal) throws(Refusal) -> Address {
        let host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw refuse("an IPv6 address without its closing ]") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw refuse("unexpected text after the address") }
                portText = after.dropFirst()
            }
        } else if let colon = rest.firstIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        } else {
            host = rest
        }
        guard !host.isEmpty else { throw refuse("no host") }
        // A name or an address: a `?` or `@` here is a query or credentials in the wrong place.
        guard host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-._:%".contains($0)) }) else {
            throw refuse("the host may hold only letters, digits and - . _ (an IPv6 address in brackets)")
        }
        var port = RedisURL.defaultPort
        if let portText {
            guard let number = Int(portText), (1...65535).contains(number) else {
                throw refuse("the port must be a number from 1 to 65535")
            }
            port = number
        }
        return .tcp(host: String(host), port: port)
    }

    /// The URL without its password.
    package var description: String {
        var credentials = ""
        if username != nil || password != nil {
            credentials = (username ?? "") + (password != nil ? ":***" : "") + "@"
        }
        if isCluster {
            let nodes = clusterSeeds.map { seed in
                guard case .tcp(let host, let port) = seed else { return "?" }
                return (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
            }
            return "redis-cluster://\(credentials)" + nodes.joined(separator: ",")
        }
        switch address {
        case .tcp(let host, let port):
            let shown = host.contains(":") ? "[\(host)]" : host
            return "redis://\(credentials)\(shown):\(port)/\(database)"
        case .unix(let path):
            return "unix://\(path)?db=\(database)" + (password != nil ? "&password=***" : "")
        }
    }

    static func database(
        _ text: some StringProtocol, _ refuse: (String) -> Refusal
    ) throws(Refusal)
        -> Int
    {
        guard let number = Int(text), number >= 0 else {
            throw refuse("the database must be a number from 0")
        }
        return number
    }

    /// `text` with its `%XX` escapes decoded; `nil` when an escape is broken or the bytes are not UTF-8.
    static func percentDecoded(_ text: some StringProtocol) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Replaced by `redacted(_:)`: it hid credentials only in the forms it knew.
    @available(*, unavailable, message: "a URL that did not parse may hold its password anywhere: use redacted(_:)")
    package static func masked(_ text: String) -> String { redacted(text) }

    /// What an error may show of `text`, a store URL that did not parse: its scheme and `:…`
    /// (`redis:…`), or `…` when it does not begin with a scheme. Nothing after the scheme is
    /// shown: a text that does not parse may hold a password anywhere (`redis:/:pw@host`,
    /// `redis//user:pw@host`, `unix:///s?PASSWORD=pw`), so no rule about where one sits holds.
    package static func redacted(_ text: String) -> String {
        let scheme = text.prefix(while: { $0 != ":" })
        // A scheme as RFC 3986 spells it (a letter, then letters, digits, + - .), and short: a
        // password with no colon before it must not pass for one.
        guard scheme.count < text.count, (1...10).contains(scheme.count), scheme.first!.isASCII,
            scheme.first!.isLetter,
            scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
        else { return "…" }
        return scheme + ":…"
    }
}
