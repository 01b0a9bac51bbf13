#pragma once
// Chapter item 13: the soft label behind the hard one. Bars of the most likely next tokens
// after a prompt, at the temperature of the slider (redrawn from the cached logits, nothing
// runs again), the entropy and the top-1 / top-3 ratio beside ratio(T = 1)^(1/T), and each
// quantization scheme's KL divergence from the reference distribution.
#include "compute/experiments/softlabels/SoftLabelsLab.hpp"
#include "widgets/JobControls.hpp"
#include "widgets/LabPanel.hpp"

class QLineEdit;
class QPushButton;
class QSlider;
class QSpinBox;

namespace inferscope::widgets {

class TableModel;

class SoftLabelsPanel : public LabPanel {
    Q_OBJECT
public:
    enum Series { Probability };

    explicit SoftLabelsPanel(QWidget* parent = nullptr);
    void attach(const PanelContext& context) override;
    // The scripted run: two schemes (the button measures four).
    std::optional<quint64> runScripted() override;
    // The reference and these schemes after the panel's prompt (0: busy or a bad name).
    quint64 run(const QStringList& schemes);
    void setDistribution(compute::experiments::NextTokenDistributionPtr labels);
    // The slider in hundredths: 25 (T = 0.25) to 400 (T = 4).
    double temperature() const;
    void setTemperature(double temperature);
    QString prompt() const;
    QSlider* temperatureSlider() const { return slider_; }
    QSpinBox* topBox() const { return top_; }
    QPushButton* runButton() const { return controls_->runButton(); }
    QPushButton* cancelButton() const { return controls_->cancelButton(); }
    TableModel* divergenceModel() const { return divergence_; }
    std::vector<compute::Table> dataTables() const override;

private:
    void rebuild();

    compute::experiments::NextTokenDistributionPtr labels_;
    TableModel* divergence_;
    QLineEdit* prompt_;
    QSlider* slider_;
    QSpinBox* top_;
    JobControls* controls_;
};

} // namespace inferscope::widgets
