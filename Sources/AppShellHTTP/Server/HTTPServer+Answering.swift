import AppShellConcurrency
import CMicroHTTPD

// How a request libmicrohttpd has read whole becomes a `Request` and is answered by the responder.

extension HTTPServer {
    /// The request libmicrohttpd has read whole on `connection`, made and answered by the
    /// responder.
    func respond(_ connection: OpaquePointer, _ pending: PendingRequest) -> Response {
        pending.clearHeaders()
        _ = withUnsafeMutablePointer(to: &pending.headers) {
            MHD_get_connection_values_n(connection, .HEADER_KIND, headerCollector, $0)
        }
        let method = HTTPMethod(rawValue: pending.method)
        let parts: Request.Parts
        do throws(HTTPError) {
            parts = try Request.parse(method: method, target: pending.target)
        } catch {
            // The client does not speak HTTP as we do: do not trust the rest of its stream.
            var response = Response.error(error, for: nil)
            response.headers.add(name: "Connection", value: "close")
            return response
        }
        // The body moves into the request; the request is handed on as it is made (a request kept
        // in a variable first was copied).
        var body: [UInt8] = []
        swap(&body, &pending.body)
        let peer = ClientAddress(appshell_mhd_client_address(connection))
        let client = configuration.trustedProxies.client(of: peer, headers: pending.headers)
        pending.client = client.ipAddress
        return answer(
            Request(
                method: method, target: pending.target, parts: parts, headers: pending.headers, body: body,
                address: peer, client: client, requestID: pending.requestID), pending)
    }

    /// The responder's answer to `request`, or the error it threw as a response; the route it went
    /// to is noted in `pending` for the metrics. A request for a host the server does not serve
    /// never reaches the responder.
    func answer(_ request: Request, _ pending: PendingRequest) -> Response {
        if let refusal = configuration.allowedHosts.refusal(for: request) { return .error(refusal, for: request) }
        do {
            if let router { return try router.router.respond(to: request, label: &pending.route) }
            return try responder.respond(to: request)
        } catch let error as HTTPError {
            return .error(error, for: request)
        } catch {
            Logger.appshell.error(
                "\(request.method) \(request.path) failed: \(error)",
                metadata: ["requestID": .string(request.requestID)])
            pending.errorCause = .unhandled
            return .error(HTTPError(.internalServerError, "internal server error"), for: request)
        }
    }
}
