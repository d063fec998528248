import Testing

@testable import Telemetry

@Suite struct MetricsRegistryTests {
    @Test func rendersTheTextFormatExactly() {
        let registry = MetricsRegistry()
        let pushes = registry.counter("countdown_pushes_total", help: "Pushes sent, by kind and result.", labels: ["kind", "result"])
        let ticks = registry.counter("countdown_ticks_total", help: "Ticks.")
        let depth = registry.gauge("countdown_queue_depth", help: "Jobs in the queue.", labels: ["state"])
        let latency = registry.histogram("countdown_push_seconds", help: "Push latency.", labels: ["kind"], buckets: [0.1, 0.5, 1])
        _ = registry.counter("countdown_dead_total", help: "Dead letters.", labels: ["kind"])

        pushes.increment(labels: "start", "ok")
        pushes.labels("start", "ok").increment(by: 2)
        pushes.increment(labels: "end", "unregistered")
        ticks.increment()
        depth.set(12, labels: "delayed")
        depth.labels("due").add(2.5)
        latency.observe(0.05, labels: "start")
        latency.observe(0.5, labels: "start")
        latency.observe(3, labels: "start")

        #expect(registry.render() == """
            # HELP countdown_dead_total Dead letters.
            # TYPE countdown_dead_total counter
            # HELP countdown_push_seconds Push latency.
            # TYPE countdown_push_seconds histogram
            countdown_push_seconds_bucket{kind="start",le="0.1"} 1
            countdown_push_seconds_bucket{kind="start",le="0.5"} 2
            countdown_push_seconds_bucket{kind="start",le="1"} 2
            countdown_push_seconds_bucket{kind="start",le="+Inf"} 3
            countdown_push_seconds_sum{kind="start"} 3.55
            countdown_push_seconds_count{kind="start"} 3
            # HELP countdown_pushes_total Pushes sent, by kind and result.
            # TYPE countdown_pushes_total counter
            countdown_pushes_total{kind="end",result="unregistered"} 1
            countdown_pushes_total{kind="start",result="ok"} 3
            # HELP countdown_queue_depth Jobs in the queue.
            # TYPE countdown_queue_depth gauge
            countdown_queue_depth{state="delayed"} 12
            countdown_queue_depth{state="due"} 2.5
            # HELP countdown_ticks_total Ticks.
            # TYPE countdown_ticks_total counter
            countdown_ticks_total 1

            """)
    }

    @Test func unlabeledFamiliesRenderZeroBeforeUse() {
        let registry = MetricsRegistry()
        _ = registry.counter("a_total", help: "A.")
        _ = registry.gauge("b", help: "B.")
        _ = registry.histogram("c_seconds", help: "C.", buckets: [1])
        #expect(registry.render() == """
            # HELP a_total A.
            # TYPE a_total counter
            a_total 0
            # HELP b B.
            # TYPE b gauge
            b 0
            # HELP c_seconds C.
            # TYPE c_seconds histogram
            c_seconds_bucket{le="1"} 0
            c_seconds_bucket{le="+Inf"} 0
            c_seconds_sum 0
            c_seconds_count 0

            """)
    }

    @Test func escapesLabelValuesAndHelp() {
        let registry = MetricsRegistry()
        let errors = registry.counter("errors_total", help: "Errors \\ by\nreason.", labels: ["reason"])
        errors.increment(labels: "say \"no\"\\path\nnext")
        errors.increment(labels: "ş 🇹🇷")
        #expect(registry.render() == """
            # HELP errors_total Errors \\\\ by\\nreason.
            # TYPE errors_total counter
            errors_total{reason="say \\"no\\"\\\\path\\nnext"} 1
            errors_total{reason="ş 🇹🇷"} 1

            """)
    }

    @Test func histogramBucketsAreInclusiveUpperBoundsAndCumulative() {
        let registry = MetricsRegistry()
        let sizes = registry.histogram("sizes", help: "S.", buckets: [1, 2, 4, .infinity])
        #expect(sizes.buckets == [1, 2, 4])
        for value in [0.0, 1, 1.0000001, 2, 3, 4, 4.5, 100, -1, .nan, .infinity] { sizes.observe(value) }
        let snapshot = sizes.labels().snapshot()
        #expect(snapshot.cumulative == [3, 5, 7, 10], "≤1: 0,1,-1; ≤2: +1.0000001,2; ≤4: +3,4; +Inf: +4.5,100,inf; NaN ignored")
        #expect(snapshot.sum == .infinity)
        let timings = registry.histogram("timings_seconds", help: "T.")
        timings.observe(.milliseconds(7))
        timings.observe(.seconds(20))
        #expect(timings.labels().snapshot().cumulative == [0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2])
        #expect(abs(timings.labels().snapshot().sum - 20.007) < 1e-9)
    }

    @Test func numbersAreFormattedForPrometheus() {
        #expect(PrometheusText.number(3) == "3")
        #expect(PrometheusText.number(-2) == "-2")
        #expect(PrometheusText.number(0.005) == "0.005")
        #expect(PrometheusText.number(2.5) == "2.5")
        #expect(PrometheusText.number(1e-7) == "1e-07")
        #expect(PrometheusText.number(1e300) == "1e+300")
        #expect(PrometheusText.number(.infinity) == "+Inf")
        #expect(PrometheusText.number(-.infinity) == "-Inf")
        #expect(PrometheusText.number(.nan) == "NaN")
    }

    @Test func redeclaringReturnsTheSameFamily() {
        let registry = MetricsRegistry()
        let first = registry.counter("jobs_total", help: "Jobs.", labels: ["kind"])
        let second = registry.counter("jobs_total", help: "Jobs.", labels: ["kind"])
        #expect(first === second)
        second.increment(labels: "start")
        #expect(first.value(labels: "start") == 1)
        let histogram = registry.histogram("h", help: "H.", buckets: [1, 2])
        #expect(histogram === registry.histogram("h", help: "H.", buckets: [1, 2]))
    }

    @Test func validatesNames() {
        #expect(PrometheusText.isValidMetricName("countdown:jobs_total"))
        #expect(!PrometheusText.isValidMetricName("2jobs") && !PrometheusText.isValidMetricName("jobs-total")
            && !PrometheusText.isValidMetricName(""))
        #expect(PrometheusText.isValidLabelName("_kind") && !PrometheusText.isValidLabelName("__name")
            && !PrometheusText.isValidLabelName("a:b"))
    }

    @Test func concurrentUpdatesAreExact() async {
        let registry = MetricsRegistry()
        let counter = registry.counter("c_total", help: "C.", labels: ["worker"])
        let plain = registry.counter("p_total", help: "P.")
        let gauge = registry.gauge("g", help: "G.")
        let histogram = registry.histogram("h", help: "H.", labels: ["kind"], buckets: [0.5])
        let tasks = 16
        let perTask = 5_000
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    let mine = counter.labels("w\(task % 4)")
                    for index in 0..<perTask {
                        mine.increment()
                        counter.increment(labels: "shared")
                        plain.increment(by: 2)
                        gauge.add(1)
                        histogram.observe(index.isMultiple(of: 2) ? 0.25 : 1, labels: "k")
                    }
                }
            }
            group.addTask { for _ in 0..<200 { _ = registry.render() } }
        }
        let total = UInt64(tasks * perTask)
        #expect(counter.value(labels: "shared") == total)
        #expect((0..<4).map { counter.value(labels: "w\($0)") }.reduce(0, +) == total)
        #expect(plain.value() == 2 * total)
        #expect(gauge.value() == Double(total))
        let snapshot = histogram.labels("k").snapshot()
        #expect(snapshot.cumulative == [total / 2, total])
        #expect(snapshot.sum == Double(total / 2) * 1.25)
    }
}
