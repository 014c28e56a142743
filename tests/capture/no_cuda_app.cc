// Stands in for capture_app.cc where CUDA's headers were not found (capture_test then skips).
int main() { return 0; }
