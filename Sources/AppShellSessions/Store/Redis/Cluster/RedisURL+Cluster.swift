extension RedisURL {
    /// Parses what follows `redis-cluster://`: `[user:password@]host:port[,host:port…][/0][?user=…&password=…]`.
    init(cluster text: Substring, _ refuse: (String) -> Refusal) throws(Refusal) {
        var rest = text
        var username: String?
        var password: String?
        if let mark = rest.firstIndex(of: "?") {
            let query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
            for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard let decoded = RedisURL.percentDecoded(parts.count == 2 ? parts[1] : "") else {
                    throw refuse("a bad % escape in a parameter")
                }
                switch parts[0] {
                case "password": password = decoded
                case "user": username = decoded
                case "db":
                    guard try RedisURL.database(decoded, refuse) == 0 else {
                        throw refuse("a Redis Cluster has database 0 only")
                    }
                // Not named: a parameter without `=` may be a password pasted in the wrong place.
                default: throw refuse("an unknown parameter (password and user are known, in lowercase)")
                }
            }
        }
        // The query's `user` and `password`, when given, win over the ones before `@`.
        if let credentials = try RedisURL.credentials(takenFrom: &rest, refuse) {
            username = username ?? credentials.username
            password = password ?? credentials.password
        }
        if let slash = rest.firstIndex(of: "/") {
            let path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
            if !path.isEmpty, try RedisURL.database(path, refuse) != 0 {
                throw refuse("a Redis Cluster has database 0 only")
            }
        }
        var seeds: [Address] = []
        for node in rest.split(separator: ",", omittingEmptySubsequences: false) {
            guard !node.isEmpty else { throw refuse("an empty node in the list (host:port,host:port)") }
            seeds.append(try RedisURL.hostAndPort(node, refuse))
        }
        self.init(clusterSeeds: seeds, username: username, password: password)
    }
}
