#pragma once
// The selection every lab panel observes (DESIGN.md: a shared selection): the layer the
// activation panels look at and the quantization scheme the scheme panels highlight.
// Setting a value that is already set emits nothing, so panels can echo it back freely.
#include <QObject>
#include <QString>

namespace inferscope::widgets {

class LabSelection : public QObject {
    Q_OBJECT
public:
    explicit LabSelection(QObject* parent = nullptr) : QObject(parent) {}
    int layer() const { return layer_; }
    QString scheme() const { return scheme_; }

public slots:
    void setLayer(int layer) {
        if (layer == layer_) return;
        layer_ = layer;
        emit layerChanged(layer);
    }
    void setScheme(const QString& scheme) {
        if (scheme == scheme_) return;
        scheme_ = scheme;
        emit schemeChanged(scheme);
    }

signals:
    void layerChanged(int layer);
    void schemeChanged(const QString& scheme);

private:
    int layer_ = 0;
    QString scheme_ = "fp16";
};

} // namespace inferscope::widgets
