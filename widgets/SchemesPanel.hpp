#pragma once
// Chapter items 8 and 11 side by side: every quantization scheme of the lab, what it does
// to the weights (relative error per scheme) and what it costs in quality (perplexity,
// factual battery, agreement with full precision). The reports
// (compute/experiments/quantization/QuantizationLabs) run on the worker thread; the panel starts
// them and shows them when they arrive. Its "Generate with" box asks the window for a weight
// format.
#include "compute/experiments/quantization/SchemeComparison.hpp"
#include "widgets/JobControls.hpp"
#include "widgets/LabPanel.hpp"

class QComboBox;
class QLabel;
class QListWidget;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace inferscope::widgets {

class TableModel;

// The panel draws experiments::schemeComparisonTable.
using compute::experiments::schemeComparisonTable;

class SchemesPanel : public LabPanel {
    Q_OBJECT
public:
    enum Series { Values };

    explicit SchemesPanel(QWidget* parent = nullptr);
    // Follows the lab by itself: the scheme reports (cleared on a load), the generation format.
    void attach(const PanelContext& context) override;
    // The scripted run: the weight-error report of the ticked schemes.
    std::optional<quint64> runScripted() override { return runWeightReport(checkedSchemes()); }
    // Start a report (0: busy, or a bad scheme name, said by jobEnded).
    quint64 runWeightReport(const QStringList& schemes);
    quint64 runQualityReport(const QStringList& schemes, int perplexityTokens, int questions);
    // Every scheme models::WeightQuantizer knows, in the chapter's order.
    static QStringList allSchemes();

    QStringList checkedSchemes() const;
    void setCheckedSchemes(const QStringList& schemes);
    QString currentScheme() const;
    void setCurrentScheme(const QString& scheme);
    void setWeightReport(std::vector<compute::Table> tables);
    void setQualityReport(std::vector<compute::Table> tables);
    void clearReports();
    void setProgress(const QString& line, int percent);
    // Asks the window to generate with a scheme ("Generate with"), then shows what it said.
    void pickGenerationScheme(const QString& scheme);
    // Which scheme the GPU generates with; known: the backend has a kernel for it.
    void setGenerationScheme(const QString& scheme, bool runsOnGpu);
    QSpinBox* perplexityTokensBox() const { return perplexityTokens_; }
    QSpinBox* questionsBox() const { return questions_; }
    QPushButton* weightButton() const { return weightButton_; }
    QPushButton* qualityButton() const { return qualityButton_; }
    QPushButton* cancelButton() const { return controls_->cancelButton(); }
    QComboBox* generationBox() const { return generationBox_; }
    TableModel* model() const { return model_; }
    std::vector<compute::Table> dataTables() const override;

signals:
    void currentSchemeChanged(const QString& scheme);

private:
    void rebuild();
    std::vector<models::QuantSchemeSpec> parsed(const QStringList& schemes);
    void showRunning(bool running);

    PanelContext context_;
    JobControls* controls_;
    std::vector<compute::Table> weightTables_, qualityTables_;
    TableModel* model_;
    QListWidget* list_;
    QSpinBox* perplexityTokens_;
    QSpinBox* questions_;
    QPushButton* weightButton_;
    QPushButton* qualityButton_;
    QProgressBar* progress_;
    QComboBox* generationBox_;
    QLabel* generationLabel_;
};

} // namespace inferscope::widgets
