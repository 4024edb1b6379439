/// Routes requests by method and path to responders.
///
/// A path pattern is a list of segments: a literal (`api`) or a capture (`:name`, any one
/// non-empty segment, available as `request.parameters["name"]`). A path no route matches goes to
/// the fallback (static files, or a 404); a path that matches with another method gets 405 and an
/// `Allow` header; a method that no route uses and RFC 9110 does not define gets 501. `HEAD` is
/// served by the `GET` route.
///
/// A route says whether it reads a request body (by default: every method but `GET`, `HEAD`,
/// `DELETE` and `TRACE`). A body sent to a route that reads none, to a path no route matches or
/// with a method the path does not allow is discarded as it arrives, never collected.
public struct Router: HTTPResponder {
    private struct Route: Sendable {
        let method: HTTPMethod
        let pattern: [Segment]
        let acceptsBody: Bool
        /// The longest body the route reads (`nil`: the server's limit).
        let maxBodyBytes: Int?
        let responder: any HTTPResponder
    }

    private enum Segment: Sendable, Equatable {
        case literal(String)
        case capture(String)
    }

    private var routes: [Route] = []
    private let fallback: (any HTTPResponder)?

    /// An empty router; unmatched paths go to `fallback`, or get 404 without one.
    public init(fallback: (any HTTPResponder)? = nil) { self.fallback = fallback }

    /// Adds a route for `method` and `path` answered by `responder`. `acceptsBody` says whether
    /// it reads request bodies (`nil`: all methods but `GET`, `HEAD`, `DELETE` and `TRACE` do);
    /// when false, a body is discarded as it arrives and the responder gets the request without it.
    /// `maxBodyBytes` is the longest body it reads (`nil`: the server's `maxBodyBytes`, which also
    /// bounds a larger value); a longer one gets 413 before it is buffered.
    public mutating func add(
        _ method: HTTPMethod, _ path: String, acceptsBody: Bool? = nil, maxBodyBytes: Int? = nil,
        _ responder: any HTTPResponder
    ) {
        let pattern = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map {
            $0.hasPrefix(":") ? Segment.capture(String($0.dropFirst())) : Segment.literal(String($0))
        }
        routes.append(
            Route(
                method: method, pattern: Array(pattern), acceptsBody: acceptsBody ?? method.carriesContent,
                maxBodyBytes: maxBodyBytes, responder: responder))
    }

    /// Adds a route answered by a closure (`acceptsBody` and `maxBodyBytes` as for a responder).
    public mutating func add(
        _ method: HTTPMethod, _ path: String, acceptsBody: Bool? = nil, maxBodyBytes: Int? = nil,
        _ handler: @escaping @Sendable (Request) throws -> Response
    ) {
        add(method, path, acceptsBody: acceptsBody, maxBodyBytes: maxBodyBytes, ClosureResponder(handler))
    }

    /// Adds a `GET` (and so `HEAD`) route.
    public mutating func get(_ path: String, _ handler: @escaping @Sendable (Request) throws -> Response) {
        add(.get, path, handler)
    }

    /// Adds a `POST` route.
    public mutating func post(_ path: String, _ handler: @escaping @Sendable (Request) throws -> Response) {
        add(.post, path, handler)
    }

    /// Adds a `GET` (and so `HEAD`) route answered by `responder`.
    public mutating func get(_ path: String, _ responder: any HTTPResponder) { add(.get, path, responder) }

    /// Adds a `POST` route answered by `responder`.
    public mutating func post(_ path: String, _ responder: any HTTPResponder) { add(.post, path, responder) }

    /// Every route's method and path as added (a capture as `:name`), in the order added: what an
    /// API description must list. `HEAD` is not among them; every `GET` route serves it.
    public var routeList: [(method: HTTPMethod, path: String)] {
        routes.map { route in
            let segments = route.pattern.map { segment -> String in
                switch segment {
                case .literal(let literal): literal
                case .capture(let name): ":" + name
                }
            }
            return (route.method, "/" + segments.joined(separator: "/"))
        }
    }

    /// Finds the route for the request and answers with it.
    public func respond(to request: Request) throws -> Response {
        var label = 0
        return try respond(to: request, label: &label)
    }

    /// The label of each route in the metrics (`GET /api/state`), in the order added; the fixed
    /// labels of `RouteLabel` follow them.
    var routeLabels: [String] { routeList.map { "\($0.method.rawValue) \($0.path)" } }

    /// Answers as `respond(to:)` does, and sets `label` to the index of the label the request is
    /// counted under — before the responder runs, so it holds also when that throws: a route's
    /// index, or past them that of `RouteLabel.fixed`.
    func respond(to request: Request, label: inout Int) throws -> Response {
        var allowed: [HTTPMethod] = []
        var headMatch: (Route, [String: String], Int)?
        // By index: a `for route in routes` loop copies each route it looks at.
        for index in routes.indices {
            guard let parameters = match(routes[index].pattern, request.pathSegments) else { continue }
            if routes[index].method == request.method {
                label = index
                // Most routes capture nothing: then the request goes on as it is, not copied.
                if parameters.isEmpty { return try routes[index].responder.respond(to: request) }
                var routed = request
                routed.parameters = parameters
                return try routes[index].responder.respond(to: routed)
            }
            let route = routes[index]
            if request.method == .head && route.method == .get && headMatch == nil {
                headMatch = (route, parameters, index)
            }
            allowed.append(route.method)
        }
        if let (route, parameters, index) = headMatch {
            label = index
            var routed = request
            routed.parameters = parameters
            return try route.responder.respond(to: routed)
        }
        label = routes.count + 2  // RouteLabel.methodNotAllowed
        if !isImplemented(request.method) { throw HTTPError.notImplemented(request.method) }
        if allowed.isEmpty {
            if let fallback {
                label = routes.count  // RouteLabel.fallback
                return try fallback.respond(to: request)
            }
            label = routes.count + 1  // RouteLabel.notFound
            throw HTTPError.notFound("no resource at \(request.path)")
        }
        if allowed.contains(.get) && !allowed.contains(.head) { allowed.append(.head) }
        var names: [String] = []
        for method in allowed where !names.contains(method.rawValue) { names.append(method.rawValue) }
        throw HTTPError(
            .methodNotAllowed,
            "\(request.method) is not allowed on \(request.path); allowed: \(names.joined(separator: ", "))",
            headers: ["Allow": names.joined(separator: ", ")])
    }

    /// Whether the route `request` goes to reads its body: none does when the path allows another
    /// method or the method is not implemented; the fallback decides for a path no route matches.
    public func acceptsBody(_ request: Request) -> Bool {
        var pathMatched = false
        for index in routes.indices where match(routes[index].pattern, request.pathSegments) != nil {
            if routes[index].method == request.method { return routes[index].acceptsBody }
            pathMatched = true
        }
        guard !pathMatched, isImplemented(request.method), let fallback else { return false }
        return fallback.acceptsBody(request)
    }

    /// The longest body the route `request` goes to reads (`nil`: the server's limit); the
    /// fallback's for a path no route matches.
    public func maxBodyBytes(for request: Request) -> Int? {
        for index in routes.indices where routes[index].method == request.method {
            if match(routes[index].pattern, request.pathSegments) != nil { return routes[index].maxBodyBytes }
        }
        return fallback?.maxBodyBytes(for: request)
    }

    /// Whether the server implements `method`: RFC 9110 defines it or a route uses it.
    private func isImplemented(_ method: HTTPMethod) -> Bool {
        method.isStandard || routes.contains { $0.method == method }
    }

    private func match(_ pattern: [Segment], _ segments: [String]) -> [String: String]? {
        guard pattern.count == segments.count else { return nil }
        var parameters: [String: String] = [:]
        for (part, segment) in zip(pattern, segments) {
            switch part {
            case .literal(let literal):
                if literal != segment { return nil }
            case .capture(let name):
                if segment.isEmpty { return nil }
                parameters[name] = segment
            }
        }
        return parameters
    }
}
