#pragma once
// The window's left column: the model line and its Open button, the backend (device, kernel
// profiling, int8 activations), the prompt with its chat template and system message, the
// sampling settings, Generate / Stop and the streamed output. It holds what the user chose and
// says what was clicked; the window acts on it.
#include "app/gui/LabTypes.hpp"
#include "app/gui/Settings.hpp"
#include "compute/session/LabSession.hpp"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QGroupBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;

namespace inferscope::gui {

class ControlsColumn : public QWidget {
    Q_OBJECT
public:
    // backendFixed: the backend came with the window (tests) and cannot be picked here.
    ControlsColumn(bool backendFixed, QWidget* parent = nullptr);

    void applySettings(const GuiSettings& settings);
    void readSettings(GuiSettings& settings) const;
    // The prompt, template and sampling as set now, and whether kernels are profiled.
    compute::GenerationRequest request() const;
    // Which actions the window's state allows.
    void setState(bool canGenerate, bool generating, bool chatAvailable, bool canPickInt8);
    void appendOutput(const QString& text);
    void setOutput(const QString& text);
    // Names the model and scheme the output came from, in its box's title.
    void setOutputSource(const QString& source);
    QString outputTitle() const;
    void setModelLine(const QString& html, const QString& tooltip);
    QString modelLine() const;
    // The backend box's entry for a key (-1: no such device here), and the key shown.
    int selectBackend(const QString& key);
    QString currentBackendKey() const;

    QComboBox* backendBox() const { return backendBox_; }
    QCheckBox* profileToggle() const { return profileCheck_; }
    QCheckBox* int8ActivationsToggle() const { return int8Check_; }
    QPlainTextEdit* promptEditor() const { return promptEdit_; }
    QPlainTextEdit* outputView() const { return outputEdit_; }
    QCheckBox* chatToggle() const { return chatCheck_; }
    QSpinBox* maxTokensBox() const { return maxTokensSpin_; }

signals:
    void openRequested();
    void backendPicked(const QString& key);
    void int8Toggled(bool on);
    void generateRequested();
    void stopRequested();

private:
    QLabel* modelLabel_ = nullptr;
    QComboBox* backendBox_ = nullptr;
    QCheckBox* profileCheck_ = nullptr;
    QCheckBox* int8Check_ = nullptr;
    QPlainTextEdit* promptEdit_ = nullptr;
    QCheckBox* chatCheck_ = nullptr;
    QLineEdit* systemEdit_ = nullptr;
    QCheckBox* greedyCheck_ = nullptr;
    QDoubleSpinBox* temperatureSpin_ = nullptr;
    QSpinBox* topKSpin_ = nullptr;
    QDoubleSpinBox* topPSpin_ = nullptr;
    QSpinBox* seedSpin_ = nullptr;
    QDoubleSpinBox* repeatPenaltySpin_ = nullptr;
    QSpinBox* maxTokensSpin_ = nullptr;
    QPushButton* generateButton_ = nullptr;
    QPushButton* stopButton_ = nullptr;
    QGroupBox* outputBox_ = nullptr;
    QPlainTextEdit* outputEdit_ = nullptr;
};

} // namespace inferscope::gui
