/// Builds views from a closure's statements, as SwiftUI's: each statement a view, `if`, `if let`,
/// `switch` and `for … in` among them.
///
/// A block of up to six statements has a function of its own, which moves the statements'
/// nodes into one list of the right size; the variadic one (seven or more) copied each statement
/// into an array of parts first, then again into the block's list (callgrind: a tenth of a small
/// screen's `body`).
@resultBuilder
public enum ViewBuilder {
    /// A view, as a statement.
    public static func buildExpression<V: View>(_ view: V) -> ViewContent {
        var nodes = ViewNodes()
        view._write(to: &nodes)
        return ViewContent(nodes)
    }

    /// Views already built, as a statement.
    public static func buildExpression(_ content: ViewContent) -> ViewContent { content }

    /// One statement.
    public static func buildBlock(_ part: consuming ViewContent) -> ViewContent { part }

    /// Two statements, one after the other.
    public static func buildBlock(_ a: consuming ViewContent, _ b: consuming ViewContent) -> ViewContent {
        var nodes = ViewNodes(capacity: a.count + b.count)
        nodes.append(contentsOf: a.content)
        nodes.append(contentsOf: b.content)
        return ViewContent(nodes)
    }

    /// Three statements, one after another.
    public static func buildBlock(
        _ a: consuming ViewContent, _ b: consuming ViewContent, _ c: consuming ViewContent
    ) -> ViewContent {
        var nodes = ViewNodes(capacity: a.count + b.count + c.count)
        nodes.append(contentsOf: a.content)
        nodes.append(contentsOf: b.content)
        nodes.append(contentsOf: c.content)
        return ViewContent(nodes)
    }

    /// Four statements, one after another.
    public static func buildBlock(
        _ a: consuming ViewContent, _ b: consuming ViewContent, _ c: consuming ViewContent,
        _ d: consuming ViewContent
    ) -> ViewContent {
        var nodes = ViewNodes(capacity: a.count + b.count + c.count + d.count)
        nodes.append(contentsOf: a.content)
        nodes.append(contentsOf: b.content)
        nodes.append(contentsOf: c.content)
        nodes.append(contentsOf: d.content)
        return ViewContent(nodes)
    }

    /// Five statements, one after another.
    public static func buildBlock(
        _ a: consuming ViewContent, _ b: consuming ViewContent, _ c: consuming ViewContent,
        _ d: consuming ViewContent, _ e: consuming ViewContent
    ) -> ViewContent {
        var nodes = ViewNodes(capacity: a.count + b.count + c.count + d.count + e.count)
        nodes.append(contentsOf: a.content)
        nodes.append(contentsOf: b.content)
        nodes.append(contentsOf: c.content)
        nodes.append(contentsOf: d.content)
        nodes.append(contentsOf: e.content)
        return ViewContent(nodes)
    }

    /// Six statements, one after another.
    public static func buildBlock(
        _ a: consuming ViewContent, _ b: consuming ViewContent, _ c: consuming ViewContent,
        _ d: consuming ViewContent, _ e: consuming ViewContent, _ f: consuming ViewContent
    ) -> ViewContent {
        var nodes = ViewNodes(capacity: a.count + b.count + c.count + d.count + e.count + f.count)
        nodes.append(contentsOf: a.content)
        nodes.append(contentsOf: b.content)
        nodes.append(contentsOf: c.content)
        nodes.append(contentsOf: d.content)
        nodes.append(contentsOf: e.content)
        nodes.append(contentsOf: f.content)
        return ViewContent(nodes)
    }

    /// The statements, one after another (seven or more).
    public static func buildBlock(_ parts: ViewContent...) -> ViewContent {
        var nodes = ViewNodes(capacity: parts.reduce(0) { $0 + $1.count })
        for part in parts { nodes.append(contentsOf: part.content) }
        return ViewContent(nodes)
    }

    /// An `if` without `else`: nothing when its condition is false.
    public static func buildOptional(_ part: ViewContent?) -> ViewContent { part ?? ViewContent([]) }

    /// An `if`'s first branch.
    public static func buildEither(first part: ViewContent) -> ViewContent { part }

    /// An `if`'s `else`, or a later `switch` case.
    public static func buildEither(second part: ViewContent) -> ViewContent { part }

    /// A `for … in` loop's views, one after another.
    public static func buildArray(_ parts: [ViewContent]) -> ViewContent {
        var nodes = ViewNodes()
        for part in parts { nodes.append(contentsOf: part.content) }
        return ViewContent(nodes)
    }

    /// An `if #available`.
    public static func buildLimitedAvailability(_ part: ViewContent) -> ViewContent { part }
}
