// KernelTime: per-kernel totals over decode steps keep each step's square, so the Kernels chart
// can show a mean with its step-to-step spread, and totals streamed in parts add up exactly.
#include "compute/engine/KernelTime.hpp"

#include <QtTest>
#include <cmath>

using namespace inferscope::compute;

class TestKernelTime : public QObject {
    Q_OBJECT
private slots:
    void spreadOverSteps() {
        std::vector<KernelTime> total;
        for (double us : {10.0, 12.0, 14.0})
            addStepKernelTimes(total, {{"matvec", 30, us}, {"attention", 30, 2.0}});
        QCOMPARE(total.size(), std::size_t(2));
        QCOMPARE(total[0].kernel, std::string("matvec"));
        QCOMPARE(total[0].steps, 3u);
        QCOMPARE(total[0].dispatches, 90u);
        QCOMPARE(total[0].microseconds, 36.0);
        QVERIFY(std::fabs(total[0].stepStandardDeviation() - 2.0) < 1e-12); // sample sd
        QCOMPARE(total[1].stepStandardDeviation(), 0.0);                    // the same every step
        // One step has no spread.
        std::vector<KernelTime> one;
        addStepKernelTimes(one, {{"matvec", 30, 10.0}});
        QCOMPARE(one[0].stepStandardDeviation(), 0.0);
    }

    void partsAddUpToTheWhole() {
        std::vector<KernelTime> whole, first, second;
        const double steps[] = {5.0, 9.0, 6.0, 11.0};
        for (int i = 0; i < 4; ++i) {
            addStepKernelTimes(whole, {{"embed", 1, steps[i]}});
            addStepKernelTimes(i < 2 ? first : second, {{"embed", 1, steps[i]}});
        }
        addKernelTimes(first, second); // what RunRecord::apply does with a delta's totals
        QCOMPARE(first[0].steps, whole[0].steps);
        QCOMPARE(first[0].microseconds, whole[0].microseconds);
        QCOMPARE(first[0].stepStandardDeviation(), whole[0].stepStandardDeviation());
    }
};

QTEST_APPLESS_MAIN(TestKernelTime)
#include "test_kernel_time.moc"
