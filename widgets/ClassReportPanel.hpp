#pragma once
// The class report in the window: File > Class report... asks where to write it, runs every
// chapter lab on the loaded model (ClassReportLab, one job with progress, an estimate of the
// time left and cancel), and writes one self-contained HTML file and, if ticked, a PDF of the
// same content. The panel shows the last report: each item's wall time on the chart and the
// item-by-item summary (agreement and verdict) below it.
#include "compute/experiments/report/ClassReportLab.hpp"
#include "widgets/JobControls.hpp"
#include "widgets/LabPanel.hpp"

#include <QString>
#include <optional>

class QAction;
class QCheckBox;
class QComboBox;

namespace inferscope::widgets {

class TableModel;

class ClassReportPanel : public LabPanel {
    Q_OBJECT
public:
    enum Series { WallTime };

    explicit ClassReportPanel(QWidget* parent = nullptr);
    void attach(const PanelContext& context) override;
    // The scripted run: items 13 and 14 alone (soft labels and the budget: seconds), shown,
    // not written.
    std::optional<quint64> runScripted() override;
    QList<QAction*> fileActions() override { return {reportAction_}; }
    QString emptyReason() const override;

    // Runs the report and writes it to `htmlPath` (and a PDF beside it when pdf is ticked);
    // items empty: all 14. Returns the job id (0: busy or no model).
    quint64 writeReport(const QString& htmlPath, const std::set<int>& items = {});
    void setReport(const compute::experiments::ClassReport& report);
    QString lastWritten() const { return lastWritten_; }
    QCheckBox* pdfBox() const { return pdf_; }
    QComboBox* profileBox() const { return profile_; }
    std::vector<compute::Table> dataTables() const override;

private:
    void chooseFileAndWrite();
    void writeFiles(const compute::experiments::ClassReport& report);

    std::optional<compute::experiments::ClassReport> report_;
    QString modelPath_, pendingHtml_, lastWritten_;
    TableModel* summary_;
    JobControls* controls_;
    QAction* reportAction_;
    QCheckBox* pdf_;
    QComboBox* profile_;
};

} // namespace inferscope::widgets
