import AppShellHTTP
import AppShellJSON

/// An app's pages, as XCoordinator's routes: an enum whose cases are the pages, their labelled
/// associated values the pages' typed parameters, each case declaring once its URL pattern and
/// the screen it shows:
///
/// ```swift
/// enum NotesRoute: AppRoutes {
///     case notes
///     case note(id: Int)
///
///     static let allCases: [NotesRoute] = [.notes, .note(id: 1)]
///
///     var path: String {
///         switch self {
///         case .notes: "/notes"
///         case .note: "/notes/:id"
///         }
///     }
///
///     var screen: any ScreenController.Type {
///         switch self {
///         case .notes: NoteListScreen.self
///         case .note: NoteDetailScreen.self
///         }
///     }
/// }
/// ```
///
/// A `:name` segment of the pattern is the parameter of that label; a parameter the pattern does
/// not name is a query member (`/login?next=…`). The framework derives from the cases the app's
/// page paths, the URL of what a session shows (`url`: the visible screen's case, its parameters
/// read from the screen's `@SceneStorage` of the same names), and reads a URL back as a case —
/// typed, so `/notes/abc` names no page (404). See `RoutedApplication`.
public protocol AppRoutes: ParameterizedCases {
    /// The case's URL pattern: `/notes/:id`.
    var path: String { get }
    /// The screen the case shows: the page of a session whose visible screen is one of these.
    var screen: any ScreenController.Type { get }
}

extension AppRoutes {
    /// The URL of this page: the pattern with the parameters in it, the others as the query
    /// (`/notes/3`, `/login?next=%2Fnotes%2F3`); a parameter without a value is left out.
    public var url: String {
        let sent = ActionEncoder.encode(self)
        var parameters = sent.parameters
        var segments: [String] = []
        for segment in path.split(separator: "/") {
            if segment.hasPrefix(":"), let value = parameters.removeValue(forKey: String(segment.dropFirst())) {
                segments.append(PercentEncoding.encode(value.formText))
            } else {
                segments.append(String(segment))
            }
        }
        let query = parameters.filter { $0.value != .null }.sorted { $0.key < $1.key }
            .map { $0.key + "=" + PercentEncoding.encode($0.value.formText) }
        return "/" + segments.joined(separator: "/") + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
    }

    /// The case `url` names: its path matched against each case's pattern in the order of
    /// `allCases` (the first whose parameters also decode: `/notes/new` is not `note(id:)`), the
    /// query's members given to the parameters the pattern does not name. `nil` when none does.
    public init?(url: String) {
        let (path, query) = Self.split(url)
        guard let route = Self(path: path, query: query) else { return nil }
        self = route
    }

    /// The case whose pattern matches `path`, with `query`'s members for its other parameters.
    init?(path: String, query: [String: String]) {
        let given = path.split(separator: "/", omittingEmptySubsequences: true)
        for (sample, pattern) in Self.patterns {
            guard pattern.count == given.count else { continue }
            var parameters: [String: JSON] = [:]
            var matches = true
            for (expected, segment) in zip(pattern, given) {
                if expected.hasPrefix(":") {
                    guard let value = PercentEncoding.decode(String(segment)) else {
                        matches = false
                        break
                    }
                    parameters[String(expected.dropFirst())] = .string(value)
                } else if expected != segment {
                    matches = false
                    break
                }
            }
            guard matches else { continue }
            let name = ActionEncoder.encode(sample).name
            for parameter in ActionProbe.parameters(of: Self.self, name) where parameters[parameter.name] == nil {
                if let value = query[parameter.name] { parameters[parameter.name] = .string(value) }
            }
            if let route = try? ActionDecoder.decode(ScreenAction(name: name, parameters: parameters)) as Self {
                self = route
                return
            }
        }
        return nil
    }

    /// Every case's sample and its pattern's segments, in the order of `allCases`.
    static var patterns: [(Self, [Substring])] { allCases.map { ($0, $0.path.split(separator: "/")) } }

    /// The page paths: every case's pattern (`/notes/:id`), as the router takes them.
    public static var pagePaths: [String] { allCases.map(\.path) }

    /// `url`'s path and its query's members (percent-decoded; the first of a name).
    static func split(_ url: String) -> (path: String, query: [String: String]) {
        let parts = url.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var query: [String: String] = [:]
        for (name, value) in PercentEncoding.decodeQuery(parts.dropFirst().first.map(String.init) ?? "") ?? []
        where query[name] == nil {
            query[name] = value
        }
        return (String(parts[0]), query)
    }

    /// The case whose screen `screen` is, its parameters read from the screen's `@SceneStorage`
    /// values of the same names (`nil` when no case shows it, or a parameter has no value).
    public static func showing(_ screen: any ScreenController) -> Self? {
        let values = (screen as? ViewController)?.sceneValues ?? [:]
        for sample in allCases where sample.screen == type(of: screen) {
            let name = ActionEncoder.encode(sample).name
            let parameters = values.mapValues(\.json)
            if let route = try? ActionDecoder.decode(ScreenAction(name: name, parameters: parameters)) as Self {
                return route
            }
        }
        return nil
    }
}
