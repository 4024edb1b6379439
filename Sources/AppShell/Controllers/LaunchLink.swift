import AppShellHTTP

/// A launch a page URL carries: `?launch=note&id=1` is the launch from the source `note` with
/// its parameter `id` — the parameters of that source's case (`LaunchSources`), read from the
/// query by name; any other query member is not the launch's. A page carries it on as a form
/// (a GET changes nothing), and a redirect carries it on in its URL.
struct LaunchLink {
    /// The source's name.
    let source: String
    /// The case's parameters the URL gives, in the case's order.
    let parameters: [(name: String, value: String)]

    /// The launch `request`'s URL carries, if any.
    init?(_ request: Request, _ application: any ShellApplication) {
        guard let source = request.query("launch") else { return nil }
        self.source = source
        parameters = application.launchParameters(of: source).compactMap { name in
            request.query(name).map { (name: name, value: $0) }
        }
    }

    /// The form's fields: `source` and the parameters.
    var fields: [(name: String, value: String)] { [(name: "source", value: source)] + parameters }

    /// The URL's query that carries it on: `launch=note&id=1`.
    var query: String {
        ([(name: "launch", value: source)] + parameters)
            .map { $0.name + "=" + PercentEncoding.encode($0.value) }.joined(separator: "&")
    }
}
