#pragma once
// Chapter items 8 and 11 side by side: every quantization scheme of the lab, what it does
// to the weights (relative error per scheme) and what it costs in quality (perplexity,
// factual battery, agreement with full precision). The reports run on the worker thread;
// the panel asks for them (signals) and shows them when they arrive.
#include "compute/experiments/SchemeComparison.hpp"
#include "widgets/ChartPanel.hpp"

class QComboBox;
class QLabel;
class QListWidget;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace inferscope::widgets {

class LabJobs;
class TableModel;

// The panel draws experiments::schemeComparisonTable.
using compute::experiments::schemeComparisonTable;

class SchemesPanel : public ChartPanel {
    Q_OBJECT
public:
    enum Series { Values };

    explicit SchemesPanel(QWidget* parent = nullptr);
    // Follows the lab's jobs by itself: the scheme reports and their progress (cleared on a load).
    void subscribe(const LabJobs& jobs);
    // Every scheme models::WeightQuantizer knows, in the chapter's order.
    static QStringList allSchemes();

    QStringList checkedSchemes() const;
    void setCheckedSchemes(const QStringList& schemes);
    QString currentScheme() const;
    void setCurrentScheme(const QString& scheme);
    void setWeightReport(std::vector<compute::Table> tables);
    void setQualityReport(std::vector<compute::Table> tables);
    void clearReports();
    void setRunning(bool running);
    void setProgress(const QString& line, int percent);
    // Which scheme the GPU generates with; known: the backend has a kernel for it.
    void setGenerationScheme(const QString& scheme, bool runsOnGpu);
    QSpinBox* perplexityTokensBox() const { return perplexityTokens_; }
    QSpinBox* questionsBox() const { return questions_; }
    QPushButton* weightButton() const { return weightButton_; }
    QPushButton* qualityButton() const { return qualityButton_; }
    QPushButton* cancelButton() const { return cancelButton_; }
    QComboBox* generationBox() const { return generationBox_; }
    TableModel* model() const { return model_; }
    std::vector<compute::Table> dataTables() const override;

signals:
    void weightReportRequested(const QStringList& schemes);
    void qualityReportRequested(const QStringList& schemes, int perplexityTokens, int questions);
    void cancelRequested();
    void currentSchemeChanged(const QString& scheme);
    void generationSchemeRequested(const QString& scheme);

private:
    void rebuild();

    std::vector<compute::Table> weightTables_, qualityTables_;
    TableModel* model_;
    QListWidget* list_;
    QSpinBox* perplexityTokens_;
    QSpinBox* questions_;
    QPushButton* weightButton_;
    QPushButton* qualityButton_;
    QPushButton* cancelButton_;
    QProgressBar* progress_;
    QLabel* progressLabel_;
    QComboBox* generationBox_;
    QLabel* generationLabel_;
};

} // namespace inferscope::widgets
