import Foundation

/// A line chart of the last hour per minute as server-rendered SVG (no script, no external asset; colours as SVG
/// presentation attributes, which the Content-Security-Policy allows), with a legend of each series' total.
struct ConsoleChart {
    struct Series: Sendable, Equatable {
        var name: String
        /// One value per minute, oldest first (60 for the last hour).
        var values: [Double]
    }

    var title: String
    /// What a value counts (`pushes`, `seconds`, `dead letters`).
    var unit: String
    var series: [Series]

    static let palette = ["#1a73e8", "#e8710a", "#1e8e3e", "#d93025", "#9334e6", "#12b5cb", "#f9ab00", "#5f6368"]
    static let width = 640.0, height = 160.0, left = 44.0, right = 8.0, top = 10.0, bottom = 22.0

    /// 60 per-minute buckets ending with the minute of `now`, from (minute, value) pairs; `combine` merges a minute's values.
    static func buckets(_ points: [(minute: Date, value: Double)], now: Date, combine: (Double, Double) -> Double = (+)) -> [Double] {
        let last = (now.timeIntervalSince1970 / 60).rounded(.down)
        var values = Array(repeating: 0.0, count: 60)
        for point in points {
            let index = 59 - Int(last - (point.minute.timeIntervalSince1970 / 60).rounded(.down))
            if values.indices.contains(index) { values[index] = combine(values[index], point.value) }
        }
        return values
    }

    var svg: HTML {
        let plotWidth = Self.width - Self.left - Self.right, plotHeight = Self.height - Self.top - Self.bottom
        let peak = max(1, series.flatMap(\.values).max() ?? 1)
        func x(_ index: Int) -> String { String(format: "%.1f", Self.left + plotWidth * Double(index) / 59) }
        func y(_ value: Double) -> String { String(format: "%.1f", Self.top + plotHeight * (1 - value / peak)) }
        let lines = HTML.join(series.enumerated().map { index, line in
            let points = line.values.enumerated().map { "\(x($0.offset)),\(y($0.element))" }.joined(separator: " ")
            return "<polyline fill=\"none\" stroke=\"\(Self.palette[index % Self.palette.count])\" stroke-width=\"2\" points=\"\(points)\"/>"
        })
        let peakLabel = peak == peak.rounded() ? String(Int(peak)) : String(format: "%.1f", peak)
        let summary = series.isEmpty ? "nothing in the last hour"
            : series.map { "\($0.name): \(Self.total($0.values, unit: unit))" }.joined(separator: "; ")
        let legend = series.isEmpty ? HTML("<li>nothing in the last hour</li>") : HTML.join(series.enumerated().map { index, line in
            "<li><svg width=\"12\" height=\"12\" aria-hidden=\"true\"><rect width=\"12\" height=\"12\" fill=\"\(Self.palette[index % Self.palette.count])\"/></svg> \(line.name): \(Self.total(line.values, unit: unit))</li>"
        })
        return """
            <figure class="chart"><figcaption>\(title)</figcaption>
            <svg viewBox="0 0 \(Int(Self.width)) \(Int(Self.height))" width="\(Int(Self.width))" height="\(Int(Self.height))" role="img" aria-label="\(title): \(summary)">
            <title>\(title)</title>
            <line x1="\(Int(Self.left))" y1="\(Int(Self.top))" x2="\(Int(Self.left))" y2="\(Int(Self.height - Self.bottom))" stroke="#888"/>
            <line x1="\(Int(Self.left))" y1="\(Int(Self.height - Self.bottom))" x2="\(Int(Self.width - Self.right))" y2="\(Int(Self.height - Self.bottom))" stroke="#888"/>
            <text x="\(Int(Self.left - 4))" y="\(Int(Self.top + 8))" text-anchor="end" font-size="11" fill="currentColor">\(peakLabel)</text>
            <text x="\(Int(Self.left - 4))" y="\(Int(Self.height - Self.bottom))" text-anchor="end" font-size="11" fill="currentColor">0</text>
            <text x="\(Int(Self.left))" y="\(Int(Self.height - 6))" font-size="11" fill="currentColor">60 min ago</text>
            <text x="\(Int(Self.width - Self.right))" y="\(Int(Self.height - 6))" text-anchor="end" font-size="11" fill="currentColor">now</text>
            \(lines)</svg><ul class="legend">\(legend)</ul></figure>
            """
    }

    /// A series' figure for the legend: the sum of counts, the peak of seconds.
    static func total(_ values: [Double], unit: String) -> String {
        unit == "seconds" ? String(format: "longest %.1f s", values.max() ?? 0) : "\(Int(values.reduce(0, +))) \(unit)"
    }
}
